"""The web page: a small standard-library HTTP server with JSON endpoints over the Python API, and one offline
HTML page (`chipwise web`)."""
