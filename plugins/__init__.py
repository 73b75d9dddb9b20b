"""Built-in tcccd plugins. Each registers in the `tcccd.plugins` entry-point group."""
