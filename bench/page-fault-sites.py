#!/usr/bin/env python3
"""
Where one process takes its page faults, by the JavaScript function that took them (issue 18: on
this VM a write fault after a fork costs ~14 us, so a spawn cycle's cost is largely its faults,
and CPU profiles attribute them to whichever function next writes a page). Not a test and not
part of `npm run bench`:

    npm run build
    TSX_TSCONFIG_PATH=bench/tsconfig.dist.json perf record -e page-faults -c 1 -g -o /tmp/pf.data -- \
      node --perf-basic-prof --interpreted-frames-native-stack --import tsx bench/profile-spawn.ts controller 400
    perf report -i /tmp/pf.data --sort pid --stdio | grep node     # the parent's pid: the largest share
    perf script -i /tmp/pf.data --pid PID > /tmp/pf.txt
    python3 bench/page-fault-sites.py /tmp/pf.txt PID WALL_MS_PER_SPAWN [TOP=40] [--chain]

WALL_MS_PER_SPAWN is what profile-spawn.ts printed; it turns the steady-state window (the last 60 %
of the run, past start-up and warm-up) into faults per spawn. `--chain` shows up to three JS frames
per site instead of the innermost one. A site without a JS frame is shown by its native function.
"""
import collections
import re
import sys

path, pid, wall_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
rest = sys.argv[4:]
top = int(next((a for a in rest if a.isdigit()), 40))
chain = '--chain' in rest

samples = []
current = None
for line in open(path, errors='replace'):
    if not line.strip():
        if current is not None:
            samples.append(current)
        current = None
        continue
    if not line.startswith(('\t', ' ')):
        header = re.match(r'\s*\S+\s+(\d+)(?:/\d+)?\s+([\d.]+):', line)
        current = {'pid': header.group(1), 't': float(header.group(2)), 'frames': []} if header else None
        continue
    if current is not None:
        parts = line.strip().split(' ', 1)
        current['frames'].append(parts[1] if len(parts) > 1 else parts[0])
if current is not None:
    samples.append(current)

mine = [s for s in samples if s['pid'] == pid]
if not mine:
    sys.exit(f'no samples of pid {pid} in {path}')
first, last = min(s['t'] for s in mine), max(s['t'] for s in mine)
low, high = first + 0.4 * (last - first), last - 0.02 * (last - first)
window = [s for s in mine if low <= s['t'] <= high]
spawns = (high - low) * 1000 / wall_ms
print(f'steady window {high - low:.2f} s = {spawns:.0f} spawns; {len(window) / spawns:.1f} faults per spawn')


def clean(frame):
    return re.sub(r'\s*\(/tmp/perf-\d+\.map\)', '', frame)


def site(sample):
    js = [clean(f)[:100] for f in sample['frames'] if 'JS:' in f]
    if js:
        return ' <- '.join(js[:3]) if chain else js[0]
    return '[native] ' + (sample['frames'][0] if sample['frames'] else '?')[:120]


counts = collections.Counter(site(s) for s in window)
for name, count in counts.most_common(top):
    print(f'{count / spawns:6.2f}  {name}')
