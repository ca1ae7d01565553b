#!/usr/bin/env python3
"""Places the stalls of an `e2e_client latency --trace` run.

Usage: latency_trace.py TRACE [THRESHOLD_MS]

Each line of TRACE is one get: when it was asked and answered (µs after the
run's start), the rows it carried and the oldest row's age. A stall in the
delivery is either a slow answer (the server held the get: a cursor write, the
parser behind, a busy host) or a late ask (the client was not asking). Prints
one line: how many of each took longer than THRESHOLD_MS (default 20), and the
longest few with their time into the run, so a p99 miss names its cause.
"""
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    threshold_us = float(sys.argv[2]) * 1000 if len(sys.argv) > 2 else 20000.0
    gets = []
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith('#'):
                continue
            sent, answered, rows, worst = (int(x) for x in line.split())
            gets.append((sent, answered, rows, worst))
    slow = [(a - s, s, r, w) for s, a, r, w in gets if a - s > threshold_us]
    gaps = [(gets[i + 1][0] - gets[i][1], gets[i][1]) for i in range(len(gets) - 1)
            if gets[i + 1][0] - gets[i][1] > threshold_us]
    worst_age = max((g[3] for g in gets), default=0)

    def ms(us):
        return '%.1f' % (us / 1000.0)

    longest = ', '.join('%s ms at %s s (%d rows, oldest %s ms)' % (ms(d), '%.2f' % (s / 1e6), r, ms(w))
                        for d, s, r, w in sorted(slow, reverse=True)[:3])
    late = ', '.join('%s ms at %s s' % (ms(d), '%.2f' % (t / 1e6)) for d, t in sorted(gaps, reverse=True)[:3])
    print('latency trace: %d gets; %d answered after over %s ms%s; %d asked over %s ms after the last answer%s;'
          ' oldest row on arrival %s ms' % (
              len(gets), len(slow), ms(threshold_us), ' (longest: ' + longest + ')' if slow else '',
              len(gaps), ms(threshold_us), ' (longest: ' + late + ')' if gaps else '', ms(worst_age)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
