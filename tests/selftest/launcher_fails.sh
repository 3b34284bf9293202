#!/bin/sh
# Prints what Open MPI's launcher prints when it cannot make its session directory, and
# fails: always (`always`), or on every other run (`once MARKER`: the first run leaves
# MARKER, the next removes it and succeeds). For expect.py's self-tests.
case "$1" in
  once)
    if [ -e "$2" ]; then
      rm -f "$2"
      echo launched
      exit 0
    fi
    touch "$2" ;;
  always) ;;
  *) echo "usage: launcher_fails.sh once MARKER | always" >&2; exit 2 ;;
esac
echo "orte_init failed: orte_session_dir failed"
exit 1
