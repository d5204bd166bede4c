#!/bin/sh
# Interleaved A/B of the API server's machinery (notes/api_machinery.md): one
# `memcore bench api` run measures two servers on the same data (the --baseline-python
# one first); which setting goes first alternates between runs. Run from a checkout:
#   PIECES="FAST_PATH HAND_CONNECTIONS" REPS="1 2 3 4" sh notes/api_machinery_ab.sh
#   python notes/api_machinery_summary.py "$OUT"
set -e
PY=${PY:-$(pwd)/.venv/bin/python}
OUT=${OUT:-/tmp/apimach}
export PYTHONPATH=${PYTHONPATH:-$(pwd)}  # this checkout (the servers run from /tmp)
mkdir -p "$OUT"
run() {  # piece, off value, on value, rep
  piece=$1; off=$2; on=$3; rep=$4
  if [ $((rep % 2)) -eq 1 ]; then first=$off; second=$on; else first=$on; second=$off; fi
  printf '#!/bin/sh\nMEMCORE_API__%s=%s exec %s "$@"\n' "$piece" "$first" "$PY" > "$OUT/py_first"
  chmod +x "$OUT/py_first"
  echo "== $piece rep $rep: first=$first second=$second load: $(cut -d' ' -f1-3 /proc/loadavg)"
  env MEMCORE_API__$piece=$second nice -n 10 "$PY" -m memcore.cli bench api --memories 2000 \
    --searches 3000 --adds 8 --baseline-python "$OUT/py_first" \
    --out "$OUT/$piece-$rep.json" > /dev/null
}
for piece in ${PIECES:-FAST_PATH HAND_CONNECTIONS}; do
  case $piece in FAST_PATH) off=false; on=true;; HAND_CONNECTIONS) off=false; on=true;; esac
  for rep in ${REPS:-1 2 3 4}; do run "$piece" "$off" "$on" "$rep"; done
done
echo "done load: $(cut -d' ' -f1-3 /proc/loadavg)"
