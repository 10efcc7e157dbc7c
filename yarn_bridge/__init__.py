"""The Python side of yarn-drf's bridge to the ResourceManager, the service process and the CLI."""
