from histor_sign.cli import entry_point

entry_point()
