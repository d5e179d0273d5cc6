"""The public protocol surface: command names, parameters, results and error codes."""
