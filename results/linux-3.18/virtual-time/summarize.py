"""Wall time, packet-hops and repeatability of pairs of `tcplab run --json`
outputs: python3 summarize.py DIR... (files NAME.run1.json, NAME.run2.json)."""
import glob
import json
import sys


def strip(r):
    r = dict(r)
    r.pop("wall_s", None)
    return r


for d in sys.argv[1:]:
    runs = {}
    for f in sorted(glob.glob(d + "/*.run[12].json")):
        r = json.load(open(f))
        runs.setdefault(f.rsplit(".run", 1)[0], []).append(r)
        hops = sum(l["tx_packets"] for l in r["links"])
        gp = [round(x["goodput_bps"] / 1e6, 2) for x in r["flows"]]
        print(f"{f}: {r['backend']} virtual {r['sim_time_s']} s, wall {r['wall_s']:.2f} s, "
              f"{r['wall_s'] / r['sim_time_s']:.2f} wall s per virtual s, {hops / r['wall_s']:.0f} packet-hops per wall s, "
              f"goodput Mbit/s {gp[:3]}")
    for k, v in runs.items():
        if len(v) == 2:
            same = json.dumps(strip(v[0]), sort_keys=True) == json.dumps(strip(v[1]), sort_keys=True)
            print(f"{k}: identical but for wall_s: {same}")
