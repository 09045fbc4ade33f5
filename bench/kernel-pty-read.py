"""The upper bound of the byte-path figure: the kernel PTY read by a tight loop.

Usage: python3 bench/kernel-pty-read.py BYTES
Forks a child on a new PTY (pty.fork) that writes BYTES bytes of 'a' (the same producer as the
throughput figure), reads the master with os.read in a loop until EIO (the slave side closed and
the master drained: no byte is lost), reaps the child, and prints one JSON line:
{"bytes": <received>, "seconds": <from before the fork to the last read that returned data>,
 "reads": <reads that returned data>, "cpuSeconds": <this process's CPU from before the fork to the
 end of the loop (user + system; Python's start-up excluded)>}.
"""
import json
import os
import pty
import sys
import time

size = int(sys.argv[1])
t0 = time.perf_counter()
cpu0 = time.process_time()
pid, fd = pty.fork()
if pid == 0:
    os.execv('/bin/sh', ['/bin/sh', '-c', "head -c %d /dev/zero | tr '\\0' a" % size])
received = 0
reads = 0
last = t0
read = os.read
while True:
    try:
        chunk = read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    received += len(chunk)
    reads += 1
    last = time.perf_counter()
cpu = time.process_time() - cpu0
os.waitpid(pid, 0)
os.close(fd)
print(json.dumps({"bytes": received, "seconds": last - t0, "reads": reads, "cpuSeconds": cpu}))
