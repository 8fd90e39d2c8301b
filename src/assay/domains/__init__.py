"""Built-in example domains. ``retail`` is the offline default of ``assay run``."""
