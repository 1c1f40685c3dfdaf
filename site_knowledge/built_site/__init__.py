"""The built-site adapter: ``site-knowledge compile`` for sites built without the plugin."""
