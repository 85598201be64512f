#!/usr/bin/env bash
# ab.sh — old against new on the same legs, for a speed change on a noisy machine.
#
#   tools/navbench/ab.sh OLD_NAVBENCH NEW_NAVBENCH RUNS -- NAVBENCH_ARGS...
#   e.g. tools/navbench/ab.sh /tmp/old/navbench build-rel/tools/navbench/navbench 5 -- \
#          --pack out/large/base.nav.gz --zone large --legs legs20.txt
#
# Runs the two builds alternately (old, new, old, new, ...) RUNS times each, keeps every run's
# output in a temporary folder, and prints per leg the smallest total wall and CPU time of each
# build (the smallest of several runs is the figure least moved by the other tenants of a
# machine), their p50 / p90 / max and sums, and the per-leg geometric means new / old. It fails
# (exit 1) when any leg's result differs between any two runs, old or new: every field of the
# navbench line but the timings and memory figures, plan_digest included, so a speed change is
# checked bit for bit on the way. Needs python3 for the arithmetic.
#
# Legs are matched by their end points, so a legs file may list a leg more than once (the file
# three times over, say): each leg's figure is then the smallest over every plan of it in every
# run, and every plan of it must give the same result. On a machine whose memory is handed back
# to the host, the plans after the first run each leg with pages the process already holds, which
# separates a change's own cost from the page faults around it (tools/navbench/README.md,
# fifteenth session: an 8-ary heap read 0.93-0.97 on single plans, its candidate 1.03 on repeated ones).
set -euo pipefail
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
  echo "usage: $0 OLD_NAVBENCH NEW_NAVBENCH RUNS -- NAVBENCH_ARGS..." >&2
  exit 2
fi
old=$1 new=$2 runs=$3
shift 4
dir=$(mktemp -d "${TMPDIR:-/tmp}/navbench-ab.XXXXXX")
for i in $(seq 1 "$runs"); do
  "$old" "$@" > "$dir/old.$i.jsonl" 2> "$dir/old.$i.err"
  "$new" "$@" > "$dir/new.$i.jsonl" 2> "$dir/new.$i.err"
done
echo "runs kept in $dir"
python3 - "$dir" "$runs" <<'PY'
import json, math, sys
d, runs = sys.argv[1], int(sys.argv[2])
TIMING = ('ms', 'cpu_ms', 'ns_per_cell', 'peak_window_bytes', 'bytes_per_cell', 'windows_kept', 'topo_from', 'compare',
          'plan_peak_bytes', 'plan_bytes_per_cell')
def load(f): # end points -> every plan of that leg in the run, in order
    legs = {}
    for j in (json.loads(l) for l in open(f) if l.startswith('{"leg"')):
        legs.setdefault((j['sx'], j['sy'], j['gx'], j['gy']), []).append(j)
    return legs
def result(j): # what must not change: all but the timings and the leg's place in the file
    return {f: v for f, v in j.items() if f not in TIMING and f != 'leg'}
sets = {b: [load('%s/%s.%d.jsonl' % (d, b, i)) for i in range(1, runs + 1)] for b in ('old', 'new')}
first = sets['old'][0]
ref = {k: result(js[0]) for k, js in first.items()}
name = {k: js[0]['leg'] for k, js in first.items()} # the leg number of its first plan
bad = 0
for b, rs in sets.items():
    for i, r in enumerate(rs, 1):
        for k in ref:
            for j in r.get(k, [{}]):
                got = result(j)
                if got != ref[k]:
                    bad += 1
                    print('leg %d differs in %s run %d: %s' % (name[k], b, i, sorted(f for f in set(got) | set(ref[k]) if got.get(f) != ref[k].get(f))))
def pct(v, p):
    v = sorted(v); x = (len(v) - 1) * p; i = int(x); j = min(i + 1, len(v) - 1)
    return v[i] + (v[j] - v[i]) * (x - i)
best = {b: {k: (min(j['ms']['total'] for r in rs for j in r.get(k, [])), min(j['cpu_ms'] for r in rs for j in r.get(k, [])))
            for k in ref} for b, rs in sets.items()}
plans = max(len(js) for js in first.values()) * runs
for b in ('old', 'new'):
    w = [x[0] for x in best[b].values()]; c = [x[1] for x in best[b].values()]
    print('%s (smallest of %d): wall p50 %.0f p90 %.0f max %.0f sum %.1f s | CPU p50 %.0f p90 %.0f sum %.1f s | legs over 4 s: %s'
          % (b, plans, pct(w, .5), pct(w, .9), max(w), sum(w) / 1e3, pct(c, .5), pct(c, .9), sum(c) / 1e3,
             sorted(name[k] for k, x in best[b].items() if x[0] > 4000)))
for i, name in ((0, 'wall'), (1, 'CPU')):
    r = [math.log(best['new'][k][i] / best['old'][k][i]) for k in ref if best['old'][k][i] > 0 and best['new'][k][i] > 0]
    print('%s: per-leg geometric mean new / old %.3f' % (name, math.exp(sum(r) / len(r)) if r else float('nan')))
print('results: %s' % ('identical in every run' if not bad else '%d leg results differ' % bad))
sys.exit(1 if bad else 0)
PY
