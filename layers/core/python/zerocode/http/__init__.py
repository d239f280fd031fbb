"""The HTTP surface: the API app and the sites origin."""
