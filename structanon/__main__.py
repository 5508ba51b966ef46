"""``python -m structanon`` runs the command line."""

from .cli import main

main(prog_name="structanon")
