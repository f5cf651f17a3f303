"""Run a command; sample the RSS of it and all its children every 20 ms; print peaks."""
import subprocess, sys, time, psutil
t0 = time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
root = psutil.Process(p.pid)
peak_tree = peak_main = 0
out = b""
import threading
def rd():
    global out
    out = p.stdout.read()
th = threading.Thread(target=rd); th.start()
while p.poll() is None:
    try:
        procs = [root] + root.children(recursive=True)
        rss = []
        for q in procs:
            try: rss.append(q.memory_info().rss)
            except psutil.Error: rss.append(0)
        peak_tree = max(peak_tree, sum(rss)); peak_main = max(peak_main, rss[0])
    except psutil.Error:
        pass
    time.sleep(0.02)
th.join()
import hashlib
print(f"rc={p.returncode} wall={time.time()-t0:.1f}s peak_main={peak_main/1e6:.0f}MB peak_tree={peak_tree/1e6:.0f}MB out_sha={hashlib.sha256(out).hexdigest()[:16]} out_len={len(out)}", file=sys.stderr)
sys.stdout.write(out.decode()[:2000])
