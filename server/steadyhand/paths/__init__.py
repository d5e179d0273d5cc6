"""Path safety: turning what a model sent into a real path the agent may touch."""
