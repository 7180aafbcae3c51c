"""Session export plugins: ``export.html`` writes a session as one self-contained HTML page."""
