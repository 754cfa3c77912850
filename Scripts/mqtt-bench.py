#!/usr/bin/env python3
"""Measures msgpipe's MQTT gateway on this host: unix links, Debian's mosquitto on a free loopback port.

latency: one phone (`msgpipe send --json`) sends M messages of S bytes one after the other; a message's start is
  when the phone reported the previous one acknowledged, its arrival when the consumer got it. Through the broker
  the consumer is `mosquitto_sub` (its own %U receive time); alone it is `msgpipe listen --json` (the time this
  script read its line). The first message (its start includes connecting) is left out.
memory: the gateway (`listen --mqtt`) connected, then the broker stopped; N phones each send K messages of 1 MiB
  and wait. Reports the gateway's VmHWM (peak RSS, /proc/PID/status) before the phones and after W seconds.

Usage: Scripts/mqtt-bench.py [--msgpipe .build/release/msgpipe] [--messages 300] [--size 100] [--phones 1,4,8]
Needs mosquitto and mosquitto-clients. Numbers go to docs/LAB.md ("The MQTT gateway's numbers")."""
import argparse, json, os, shutil, socket, subprocess, sys, tempfile, threading, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.02)
    sys.exit(f"timed out waiting for {what}")


class Broker:
    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "broker")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)  # started as root, mosquitto runs as its own user
        self.port = free_port()
        self.conf = os.path.join(self.dir, "mosquitto.conf")
        with open(self.conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                    f"persistence_location {self.dir}/\nautosave_interval 1\n")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(["mosquitto", "-c", self.conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def accepts():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        wait_until(accepts, 10, "mosquitto")

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait()
            self.process = None

    @property
    def url(self):
        return f"mqtt://127.0.0.1:{self.port}/bench"


class Lines:
    """A process's standard output, each line with the time it was read."""

    def __init__(self, process):
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            now = time.time()
            with self.lock:
                self.lines.append((now, line.decode(errors="replace").rstrip("\n")))

    def snapshot(self):
        with self.lock:
            return list(self.lines)


def start_listen(msgpipe, sock, extra):
    # Through the broker its own output is not read: it goes nowhere rather than fill a pipe.
    output = subprocess.DEVNULL if "--mqtt" in extra else subprocess.PIPE
    process = subprocess.Popen([msgpipe, "listen", "--link", f"unix:{sock}", "--json"] + extra,
                               stdout=output, stderr=subprocess.PIPE)
    ready = threading.Event()
    marker = "publishing to" if "--mqtt" in extra else "listening on"

    def watch():
        for line in process.stderr:
            if marker in line.decode(errors="replace"):
                ready.set()
    threading.Thread(target=watch, daemon=True).start()
    if not ready.wait(20):
        sys.exit(f"listen did not start ({' '.join(extra)})")
    return process


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latency(msgpipe, workdir, through_broker, messages, size):
    run = tempfile.mkdtemp(dir=workdir)
    sock = os.path.join(run, "gw.sock")
    files = []
    for i in range(1, messages + 1):
        path = os.path.join(run, f"m{i:04d}")
        with open(path, "wb") as f:
            f.write(f"m{i:04d}-".encode().ljust(size, b"x"))
        files.append(path)
    broker = consumer = None
    if through_broker:
        broker = Broker(run)
        broker.start()
        consumer = subprocess.Popen(["mosquitto_sub", "-V", "mqttv5", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1",
                                     "-t", "bench/+/up", "-F", "%U %p"], stdout=subprocess.PIPE)
        arrivals_source = Lines(consumer)
        time.sleep(0.3)
        gateway = start_listen(msgpipe, sock, ["--mqtt", broker.url, "--gateway", "bench", "--metrics-interval", "0"])
    else:
        gateway = start_listen(msgpipe, sock, [])
        arrivals_source = Lines(gateway)
    phone = subprocess.Popen([msgpipe, "send", "--link", f"unix:{sock}", "--json"] + files, stdout=subprocess.PIPE)
    acks = Lines(phone)
    phone.wait()
    wait_until(lambda: len(arrivals_source.snapshot()) >= messages, 30, "every message at the consumer")
    acked = {json.loads(line)["index"]: stamp for stamp, line in acks.snapshot()}
    arrivals = {}
    for stamp, line in arrivals_source.snapshot():
        if through_broker:
            received, payload = line.split(" ", 1)
            arrivals[int(payload[1:5])] = float(received)
        else:
            arrivals[json.loads(line)["index"]] = stamp
    samples = [(arrivals[i] - acked[i - 1]) * 1000 for i in range(2, messages + 1)]
    rate = (messages - 1) / (acked[messages] - acked[1])
    for process in (gateway, consumer):
        if process:
            process.terminate()
            process.wait()
    if broker:
        broker.stop()
    return samples, rate


def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024  # MiB
    return None


def memory(msgpipe, workdir, phones, per_phone, wait):
    run = tempfile.mkdtemp(dir=workdir)
    sock = os.path.join(run, "gw.sock")
    files = []
    for i in range(per_phone):
        path = os.path.join(run, f"big{i}")
        with open(path, "wb") as f:
            f.write(os.urandom(1 << 20))
        files.append(path)
    broker = Broker(run)
    broker.start()
    gateway = start_listen(msgpipe, sock, ["--mqtt", broker.url, "--gateway", "bench", "--metrics-interval", "0"])
    time.sleep(0.5)
    before = status(gateway.pid, "VmHWM")
    broker.stop()
    senders = [subprocess.Popen([msgpipe, "send", "--link", f"unix:{sock}"] + files,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(phones)]
    time.sleep(wait)
    peak, rss = status(gateway.pid, "VmHWM"), status(gateway.pid, "VmRSS")
    still_sending = sum(1 for s in senders if s.poll() is None)
    for s in senders:
        s.kill()
        s.wait()
    gateway.terminate()
    gateway.wait()
    return before, peak, rss, still_sending


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--msgpipe", default=".build/release/msgpipe")
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--phones", default="1,4,8")
    parser.add_argument("--per-phone", type=int, default=12, help="1 MiB messages each phone sends (memory)")
    parser.add_argument("--wait", type=float, default=10, help="seconds the phones send into the held gateway")
    args = parser.parse_args()
    for tool in ("mosquitto", "mosquitto_sub"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing (apt-get install mosquitto mosquitto-clients)")
    workdir = tempfile.mkdtemp(prefix="mqtt-bench-")
    os.chmod(workdir, 0o755)
    try:
        print(f"latency phone -> consumer, {args.messages} x {args.size} B, one phone sending one at a time ({args.msgpipe})")
        for name, through in (("listen alone", False), ("through mosquitto", True)):
            samples, rate = latency(args.msgpipe, workdir, through, args.messages, args.size)
            slow = sum(1 for sample in samples if sample > 100)
            print(f"  {name:18} p50 {percentile(samples, 50):6.2f} ms  p90 {percentile(samples, 90):6.2f} ms  "
                  f"p99 {percentile(samples, 99):6.2f} ms  min {min(samples):5.2f} ms  over 100 ms: {slow}  {rate:4.0f} msg/s")
        print(f"gateway memory with the broker down, {args.per_phone} x 1 MiB per phone, after {args.wait:.0f} s")
        for phones in (int(n) for n in args.phones.split(",")):
            before, peak, rss, waiting = memory(args.msgpipe, workdir, phones, args.per_phone, args.wait)
            print(f"  {phones} phone(s): VmHWM {before} MiB before, {peak} MiB peak, VmRSS {rss} MiB; "
                  f"{waiting} phone(s) still waiting")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
