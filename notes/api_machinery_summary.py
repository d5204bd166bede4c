"""Per piece: each run's on/off figures and their ratio; the median ratio over the runs."""
import json, statistics, sys
from pathlib import Path
ON = {"FAST_PATH": "true", "SEARCH_POOL": "fixed", "HAND_CONNECTIONS": "true"}  # SEARCH_POOL: session 13 runs (removed since)
for piece, on in ON.items():
    runs = sorted(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/apimach").glob(f"{piece}-*.json"))
    if not runs:
        continue
    ratios = {k: [] for k in ("search_rps", "server_cpu_ms_per_search", "search_p50_ms", "search_p95_ms", "search_1_client_p50_ms")}
    print(f"### {piece} (on = {on})")
    print("| run | order | rps on/off | server CPU ms/search on/off | p50 ms on/off | p95 ms on/off | 1-client p50 ms on/off |")
    print("|---|---|---|---|---|---|---|")
    for path in runs:
        r = json.loads(path.read_text()); b = r["baseline"]
        rep = int(path.stem.rsplit("-", 1)[1])
        first_on = rep % 2 == 0
        on_r, off_r = (b, r) if first_on else (r, b)
        cells = []
        for k in ratios:
            ratios[k].append(on_r[k] / off_r[k])
            cells.append(f"{on_r[k]:.{0 if k == 'search_rps' else 2}f} / {off_r[k]:.{0 if k == 'search_rps' else 2}f}")
        print(f"| {rep} | {'on first' if first_on else 'off first'} | " + " | ".join(cells) + " |")
    print("| median ratio on/off | | " + " | ".join(f"{statistics.median(v):.2f}" for v in ratios.values()) + " |")
    print()
