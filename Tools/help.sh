# Sourced by the Tools scripts: `-h` or `--help` as the first argument prints the script's
# header comment (its usage) and exits, so asking never starts a run.
if [[ ${1-} == -h || ${1-} == --help ]]; then
  sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"
  exit 0
fi
