"""Resource discovery: where skills, prompt templates, themes and context files are found, and how they load."""
