"""The commands of `quire` (cli.py), a module per group, each imported only when it runs."""
