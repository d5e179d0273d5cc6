"""Reading beyond plain text: notebooks, images, PDFs, and outlines of large text files."""
