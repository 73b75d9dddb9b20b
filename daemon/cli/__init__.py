"""`tcccd`: the command line of operators and scripts."""
