#!/bin/bash
# blelab.sh - run a command inside a throw-away qemu VM with the real Linux Bluetooth stack and four virtual
# LE controllers (BlueZ btvirt over hci_vhci). msgpipe's lab: see docs/LAB.md.
#
# The guest boots Debian's kernel (the linux-image-amd64 dependency, fetched with `apt-get download` and
# unpacked, never installed) and sees this machine's root filesystem read-only over 9p with a tmpfs overlay,
# so binaries built here run unchanged inside. OUTDIR is shared read-write at the same path.
#
# Inside the guest, before CMD runs: modules bluetooth + hci_vhci loaded, `btvirt -L -l4` running (the lab's
# own build of it, see build_btvirt, unless BLELAB_STOCK_BTVIRT=1),
#   hci0 ("A"): powered, LE, connectable, advertising;  hci1 ("B"), hci2 ("C") and hci3 ("D"): powered, LE.
#   env: BLELAB_ADDR_A / _B / _C / _D, BLELAB_HCI_A=hci0, BLELAB_HCI_B=hci1, BLELAB_HCI_C=hci2, BLELAB_HCI_D=hci3, BLELAB_OUT=OUTDIR, BLELAB_BTVIRT (the emulator running),
#   BLELAB_DIR (the lab's directory: its python/ holds bleak, its bumble/ a venv with Bumble)
#
# Usage:
#   Scripts/blelab.sh --setup                     apt packages, kernel, initramfs, pairing agent, bleak
#   Scripts/blelab.sh --setup-bleak               bleak from PyPI into $BLELAB_DIR/python (the stock-box checks)
#   Scripts/blelab.sh --setup-bumble              a venv of Debian's python3 with Bumble (PyPI) in $BLELAB_DIR/bumble
#   Scripts/blelab.sh [-o OUTDIR] [-t SECS] [--] CMD [ARGS...]
#       runs CMD with bash in the guest, in the current directory; exits with CMD's status (125: VM failed)
# Environment:
#   BLELAB_DIR (default /tmp/blelab), BLELAB_ACCEL (tcg|kvm|auto), BLELAB_MEM (MiB, default 2048),
#   BLELAB_BTVIRT (default "-L -l4"), BLELAB_STOCK_BTVIRT=1 (Debian's btvirt, whose controllers cannot
#   carry two links at once), BLELAB_AUTOCONFIRM=1 (pairing agent), BLELAB_VERBOSE=1 (kernel log),
#   BLELAB_DISK=IMAGE (a raw image attached as a virtio disk, cache=writeback: the guest sees /dev/vda, env
#   BLELAB_DISK=/dev/vda, with virtio_blk and ext4 loaded; what the guest wrote to the disk, flushed or not,
#   is in the host's page cache and survives the VM; what sat in the guest's page cache dies with it, as on
#   a power loss: Scripts/lab-powercut.sh)
# Facts (kernel 6.1, BlueZ 5.66): run as root; kvm_pvm hosts cannot boot a stock kernel, so TCG is used;
# btmgmt quits at stdin EOF (the guest command's stdin is the console, which never ends); an LE connect
# completes only to a peer that advertises connectable; an advertising controller does not connect out.
set -uo pipefail
# The root tools (modprobe, btmgmt's helpers, ip) live in sbin, which a user's PATH kept through sudo lacks.
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

LAB=${BLELAB_DIR:-/tmp/blelab}
SELF=$(readlink -f "${BASH_SOURCE[0]}")
ROOT=$(dirname "$(dirname "$SELF")")
PACKAGES="qemu-system-x86 bluez bluez-test-tools libbluetooth-dev busybox-static kmod cpio gcc libc6-dev patch xz-utils make pkg-config libglib2.0-dev libdbus-1-dev"

log() { echo "[blelab] $*" >&2; }

kernel_version() {
	local v
	v=$(ls "$LAB"/kernel/boot/ 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V | tail -1)
	[ -n "$v" ] && echo "$v"
}

# ------------------------------------------------------------------------------------------ guest side --
guest_main() {
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root TERM=dumb LANG=C.UTF-8
	local x OUT="" DISK=0 BTVIRT_ARGS="-L -l4" AUTOCONFIRM=0 STOCK_BTVIRT=0 BTVIRT=btvirt i rc n COUNT
	mount -t proc proc /proc 2>/dev/null
	mount -t sysfs sysfs /sys 2>/dev/null
	mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -p /run/lock /var/lib/bluetooth
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	stty -F /dev/console -onlcr 2>/dev/null
	hostname blelab
	ip link set lo up 2>/dev/null

	for x in $(cat /proc/cmdline); do
		case "$x" in
		blelab.out=*) OUT=${x#blelab.out=} ;;
		blelab.btvirt=*) BTVIRT_ARGS=$(echo "${x#blelab.btvirt=}" | tr ',' ' ') ;;
		blelab.autoconfirm=*) AUTOCONFIRM=${x#blelab.autoconfirm=} ;;
		blelab.lab=*) LAB=${x#blelab.lab=} ;;
		blelab.stockbtvirt=*) STOCK_BTVIRT=${x#blelab.stockbtvirt=} ;;
		blelab.disk=*) DISK=${x#blelab.disk=} ;;
		esac
	done
	mkdir -p "$OUT"
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none out "$OUT"; then
		echo "[blelab-guest] cannot mount the output share"; echo o > /proc/sysrq-trigger; sleep 10
	fi
	local CTL=$OUT/.blelab
	echo "[blelab-guest] userspace up at $(cut -d' ' -f1 /proc/uptime)s"

	local K; K=$(uname -r)
	mkdir -p /lib/modules
	[ -e /lib/modules/"$K" ] || ln -s "$LAB/kernel/lib/modules/$K" /lib/modules/"$K"
	for m in bluetooth hci_vhci ecdh_generic cmac; do
		modprobe "$m" || echo "[blelab-guest] modprobe $m failed"
	done
	# BLELAB_DISK: the modules come from the lab's kernel tree like the ones above (only when a disk is attached).
	unset BLELAB_DISK
	if [ "$DISK" = 1 ]; then
		for m in virtio_blk ext4; do modprobe "$m" || echo "[blelab-guest] modprobe $m failed"; done
		for i in $(seq 1 50); do [ -b /dev/vda ] && break; sleep 0.1; done
		[ -b /dev/vda ] && export BLELAB_DISK=/dev/vda || echo "[blelab-guest] no /dev/vda"
	fi
	if [ "$AUTOCONFIRM" = 1 ] && [ -x "$LAB/bin/mgmt_autoconfirm" ]; then
		"$LAB/bin/mgmt_autoconfirm" > "$CTL/autoconfirm.log" 2>&1 &
	fi

	# The LE-only controllers of one btvirt process (-lN: N of them, 3 by default) share one virtual air. On a loaded host the
	# emulated CPU is so slow that a controller's HCI Reset can time out during the kernel's setup
	# ("hci0: Opcode 0x0c03 failed: -110"); such a controller never reaches mgmt ("Invalid Index") and
	# cannot be revived: then btvirt is restarted, which recreates both controllers.
	[ "$STOCK_BTVIRT" != 1 ] && [ -x "$LAB/bin/btvirt" ] && BTVIRT=$LAB/bin/btvirt
	echo "[blelab-guest] controllers by $BTVIRT $BTVIRT_ARGS"
	local BTVIRT_PID="" try
	COUNT=$(echo "$BTVIRT_ARGS" | sed -n 's/.*-l\([0-9]\+\).*/\1/p'); COUNT=${COUNT:-1}
	for try in 1 2 3 4; do
		"$BTVIRT" $BTVIRT_ARGS >> "$CTL/btvirt.log" 2>&1 &
		BTVIRT_PID=$!
		local until=$((SECONDS + (try == 1 ? 10 : 15)))
		while [ $SECONDS -lt $until ]; do
			[ "$(btmgmt info 2>/dev/null | grep -c '^hci[0-9]*:')" = "$COUNT" ] && break 2
			sleep 0.2
		done
		echo "[blelab-guest] controllers not ready after attempt $try ($(ls /sys/class/bluetooth | tr '\n' ' ')); restarting btvirt"
		kill "$BTVIRT_PID"; wait "$BTVIRT_PID" 2>/dev/null
		for i in $(seq 1 50); do [ -z "$(ls /sys/class/bluetooth 2>/dev/null)" ] && break; sleep 0.1; done
	done
	{
		btmgmt --index 0 le on; btmgmt --index 0 connectable on
		btmgmt --index 0 advertising on; btmgmt --index 0 power on
		for ((n = 1; n < COUNT; n++)); do btmgmt --index $n le on; btmgmt --index $n power on; done
	} > "$CTL/btmgmt.log" 2>&1
	export BLELAB_HCI_A=hci0 BLELAB_HCI_B=hci1 BLELAB_HCI_C=hci2 BLELAB_HCI_D=hci3 BLELAB_OUT=$OUT BLELAB_DIR=$LAB BLELAB_BTVIRT=$BTVIRT
	address_of() { btmgmt --index "$1" info 2>/dev/null | sed -n 's/^[[:space:]]*addr \([0-9A-Fa-f:]\{17\}\).*/\1/p' | head -1; }
	BLELAB_ADDR_A=$(address_of 0); BLELAB_ADDR_B=$(address_of 1); BLELAB_ADDR_C=""; BLELAB_ADDR_D=""
	[ "$COUNT" -ge 3 ] && BLELAB_ADDR_C=$(address_of 2)
	[ "$COUNT" -ge 4 ] && BLELAB_ADDR_D=$(address_of 3)
	export BLELAB_ADDR_A BLELAB_ADDR_B BLELAB_ADDR_C BLELAB_ADDR_D
	echo "[blelab-guest] A=hci0 $BLELAB_ADDR_A  B=hci1 $BLELAB_ADDR_B  C=hci2 ${BLELAB_ADDR_C:-none}  D=hci3 ${BLELAB_ADDR_D:-none}; command starts at $(cut -d' ' -f1 /proc/uptime)s"
	echo "--------------------------------------------------------------------"
	cd "$(cat "$CTL/cwd" 2>/dev/null || echo /)" 2>/dev/null || cd /
	bash "$CTL/cmd.sh"
	rc=$?
	cd /
	echo "--------------------------------------------------------------------"
	echo "[blelab-guest] command exited with $rc at $(cut -d' ' -f1 /proc/uptime)s"
	echo "$rc" > "$CTL/rc"
	for ((n = 0; n < COUNT; n++)); do btmgmt --index $n power off > /dev/null 2>&1; done
	kill "$BTVIRT_PID" 2>/dev/null
	sync
	umount "$OUT" 2>/dev/null
	echo o > /proc/sysrq-trigger
	sleep 30
}

if [ "${1:-}" = "--guest-stage2" ]; then
	guest_main
	exit 0
fi

# ------------------------------------------------------------------------------------------- host side --
build_initramfs() {
	local K d f
	K=$(kernel_version) || { log "no kernel in $LAB/kernel"; return 1; }
	d=$LAB/initramfs.d
	rm -rf "$d"
	mkdir -p "$d"/{bin,mods,proc,sys,dev,lower,upper,newroot}
	cp /bin/busybox "$d/bin/busybox"
	modprobe -d "$LAB/kernel" -S "$K" -a --show-depends virtio_pci 9pnet_virtio 9p overlay |
		awk '$1=="insmod"{print $2}' | awk '!seen[$0]++' > "$d/mods/list" || return 1
	while read -r f; do
		cp "$f" "$d/mods/"
		basename "$f" >> "$d/mods/order"
	done < "$d/mods/list"
	rm "$d/mods/list"
	cat > "$d/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() { echo "[blelab-initramfs] $*"; echo o > /proc/sysrq-trigger; sleep 10; }
for m in $(cat /mods/order); do insmod /mods/$m || echo "insmod $m failed"; done
STAGE2=""
for x in $(cat /proc/cmdline); do case "$x" in blelab.stage2=*) STAGE2=${x#blelab.stage2=} ;; esac; done
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot /lower || fail "9p mount failed"
mount -t tmpfs -o mode=0755 tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot || fail "overlay failed"
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /bin/bash "$STAGE2" --guest-stage2
INIT
	chmod 755 "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) > "$LAB/initramfs.cpio.gz" || return 1
	log "built $LAB/initramfs.cpio.gz for $K ($(wc -l < "$d/mods/order") modules)"
}

# The lab's btvirt: Debian's bluez source (apt-get source with private lists under $LAB/btvirt, nothing
# installed) with Tests/lab/btvirt-lab.patch, compiled with gcc. Stock btvirt (BlueZ 5.66, unchanged
# upstream) numbers a link on each controller on its own but names it by the central's number in LE
# Connection Complete and in ACL data: a controller with two links gets two links "42" (docs/LAB.md).
build_btvirt() {
	local d=$LAB/btvirt v apt src
	v=$(dpkg-query -W -f='${Version}' bluez 2>/dev/null) || return 1
	rm -rf "$d"; mkdir -p "$d/parts" "$d/lists/partial" "$d/cache/archives/partial" "$d/src" "$LAB/bin"
	sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | sort -u > "$d/uris"
	[ -s "$d/uris" ] || echo http://deb.debian.org/debian > "$d/uris"
	. /etc/os-release
	while read -r uri; do
		case "$uri" in
		*security*) printf 'Types: deb-src\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' "$uri" "$VERSION_CODENAME" ;;
		*) printf 'Types: deb-src\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' "$uri" "$VERSION_CODENAME" "$VERSION_CODENAME" ;;
		esac
	done < "$d/uris" > "$d/parts/blelab-src.sources"
	apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$d/parts"
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache")
	"${apt[@]}" update > "$d/apt.log" 2>&1 || { log "apt-get update (deb-src) failed, see $d/apt.log"; return 1; }
	(cd "$d" && "${apt[@]}" source --download-only "bluez=$v") >> "$d/apt.log" 2>&1 ||
		{ log "apt-get source bluez=$v failed, see $d/apt.log"; return 1; }
	tar -xf "$d"/bluez_*.orig.tar.* -C "$d/src" --strip-components=1 || return 1
	(cd "$d/src" && patch -p1 < "$ROOT/Tests/lab/btvirt-lab.patch") > /dev/null || return 1
	src=$d/src
	mkdir -p "$src/lib/bluetooth" && cp "$src"/lib/*.h "$src/lib/bluetooth/"
	printf '#define VERSION "%s"\n#define PACKAGE "bluez"\n' "${v%%-*}" > "$src/config.h"
	# Built beside and renamed over: a VM running the old one keeps it.
	(cd "$src" && gcc -O2 -w -include config.h -I. -Ilib -o "$LAB/bin/btvirt.new" \
		emulator/main.c emulator/serial.c emulator/server.c emulator/vhci.c emulator/btdev.c \
		emulator/bthost.c emulator/smp.c emulator/phy.c emulator/amp.c emulator/le.c \
		src/shared/io-mainloop.c src/shared/timeout-mainloop.c src/shared/mainloop.c \
		src/shared/mainloop-notify.c src/shared/queue.c src/shared/util.c src/shared/crypto.c \
		src/shared/ecc.c src/shared/hci.c src/shared/hci-crypto.c src/shared/ringbuf.c src/shared/log.c \
		lib/bluetooth.c lib/hci.c) && mv -f "$LAB/bin/btvirt.new" "$LAB/bin/btvirt" || { log "building btvirt failed"; return 1; }
	log "built $LAB/bin/btvirt (bluez $v with Tests/lab/btvirt-lab.patch)"
}

# A newer bluetoothd beside Debian 12's 5.66: Debian 13's (trixie) bluez source, fetched like btvirt's (private
# lists, nothing installed) and built without the parts that need more libraries (obex, udev, mesh, midi, cups,
# the tools). $LAB/bluez-new/bluetoothd runs in the guest like the stock one (the host's glib and libdbus over 9p);
# the lab's Lab.NewBluez tests check several centrals at once through it, which 5.66 cannot (one socket for all).
# Its path ends in /bluetoothd: msgpipe reads the running version by running the owner of org.bluez.
build_bluetoothd_new() {
	local d=$LAB/bluez-new apt src v
	rm -rf "$d"; mkdir -p "$d/parts" "$d/lists/partial" "$d/cache/archives/partial" "$d/src" "$LAB/bin"
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		> "$d/parts/blelab-trixie-src.sources"
	apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$d/parts"
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache")
	"${apt[@]}" update > "$d/apt.log" 2>&1 || { log "apt-get update (trixie deb-src) failed, see $d/apt.log"; return 1; }
	(cd "$d" && "${apt[@]}" source --download-only bluez) >> "$d/apt.log" 2>&1 ||
		{ log "apt-get source bluez (trixie) failed, see $d/apt.log"; return 1; }
	tar -xf "$d"/bluez_*.orig.tar.* -C "$d/src" --strip-components=1 || return 1
	src=$d/src
	(cd "$src" && ./configure -q --disable-obex --disable-client --disable-manpages --disable-udev --disable-cups \
		--disable-monitor --disable-tools --disable-mesh --disable-midi --disable-systemd --disable-datafiles &&
		make -j"$(nproc)" src/builtin.h src/bluetoothd) > "$d/build.log" 2>&1 ||
		{ log "building bluetoothd (trixie) failed, see $d/build.log"; return 1; }
	cp "$src/src/bluetoothd" "$LAB/bluez-new/bluetoothd" || return 1
	v=$("$LAB/bluez-new/bluetoothd" --version)
	rm -rf "$src"
	log "built $LAB/bluez-new/bluetoothd (bluez $v, Debian trixie's source)"
}

# bleak (PyPI), the lab's independent D-Bus central (Tests/lab/bleak_central.py), for Debian's python3 (the
# guest's python3): installed with pip --target into $LAB/python, so neither the system's Python nor a user's
# site-packages is touched (PEP 668 does not apply there; --break-system-packages only as the last resort).
# The guest puts $LAB/python on PYTHONPATH. Without it the lab skips its bleak checks and says why.
setup_bleak() {
	local py=/usr/bin/python3 target=$LAB/python
	PYTHONPATH=$target "$py" -c 'import bleak' > /dev/null 2>&1 && return 0
	if ! "$py" -m pip --version > /dev/null 2>&1; then
		log "installing python3-pip (for bleak)"
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pip; } > /dev/null ||
			{ log "cannot install python3-pip: the lab's bleak checks will be skipped"; return 1; }
	fi
	rm -rf "$target"
	local pip=("$py" -m pip install -q --disable-pip-version-check --no-warn-script-location --target "$target" bleak)
	"${pip[@]}" || PIP_ROOT_USER_ACTION=ignore "${pip[@]}" --break-system-packages ||
		{ log "pip could not install bleak: the lab's bleak checks will be skipped"; return 1; }
	PYTHONPATH=$target "$py" -c 'import bleak' || return 1
	log "installed bleak into $target"
}

# Bumble (PyPI `bumble`, Google's BLE host in Python), the lab's phone (Tests/lab/bumble_*.py, Tests/LabTests/Bumble):
# a venv of Debian's /usr/bin/python3 in $LAB/bumble, which has socket.AF_BLUETOOTH for Bumble's HCI user channel
# (a pyenv or other python on PATH may lack it). Idempotent: redone when `import bumble` fails. The guest runs
# $LAB/bumble/bin/python (the host's files over 9p). Without it the lab skips its Bumble checks and says why.
setup_bumble() {
	local py=/usr/bin/python3 venv=$LAB/bumble
	"$venv/bin/python" -c 'import bumble, socket; socket.AF_BLUETOOTH' > /dev/null 2>&1 && return 0
	if ! "$py" -c 'import ensurepip, venv' > /dev/null 2>&1; then
		log "installing python3-venv (for Bumble)"
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv; } > /dev/null ||
			{ log "cannot install python3-venv: the lab's Bumble checks will be skipped"; return 1; }
	fi
	rm -rf "$venv"
	"$py" -m venv "$venv" || { log "python3 -m venv $venv failed: the lab's Bumble checks will be skipped"; return 1; }
	PIP_ROOT_USER_ACTION=ignore "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-warn-script-location bumble ||
		{ log "pip could not install bumble: the lab's Bumble checks will be skipped"; return 1; }
	"$venv/bin/python" -c 'import bumble, socket; socket.AF_BLUETOOTH' || return 1
	log "installed bumble $("$venv/bin/python" -m pip show bumble 2>/dev/null | sed -n 's/^Version: //p') into $venv"
}

build_agent() {
	mkdir -p "$LAB/bin"
	gcc -O2 -Wall -o "$LAB/bin/mgmt_autoconfirm" "$ROOT/Tests/lab/mgmt_autoconfirm.c" -lbluetooth
}

setup() {
	local need=() p pkg K
	mkdir -p "$LAB/debs"
	for p in $PACKAGES; do dpkg -s "$p" > /dev/null 2>&1 || need+=("$p"); done
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]}"
		apt-get update -q || return 1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" || return 1
	fi
	if [ -z "$(kernel_version)" ]; then
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
		if [ -z "$pkg" ]; then
			apt-get update -q || return 1
			pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
		fi
		[ -n "$pkg" ] || { log "cannot find the package linux-image-amd64 depends on"; return 1; }
		log "downloading $pkg"
		(cd "$LAB/debs" && apt-get download "$pkg") || return 1
		dpkg -x "$LAB/debs/${pkg}"_*.deb "$LAB/kernel" || return 1
		rm -f "$LAB/debs/${pkg}"_*.deb
	fi
	K=$(kernel_version)
	[ -e "$LAB/kernel/lib/modules/$K/modules.dep" ] || depmod -b "$LAB/kernel" "$K" || return 1
	build_agent || return 1
	build_btvirt || log "no lab btvirt: the stock one cannot carry two links on one controller (docs/LAB.md)"
	build_bluetoothd_new || log "no newer bluetoothd: the lab's checks through it will be skipped"
	setup_bleak || true
	setup_bumble || true
	build_initramfs
}

choose_accel() {
	local a=${BLELAB_ACCEL:-auto}
	if [ "$a" = auto ]; then
		a=tcg
		# A stock kernel needs real VT-x/AMD-V; a kvm_pvm /dev/kvm only runs PVM guests (the VM hangs).
		if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && ! [ -d /sys/module/kvm_pvm ]; then a=kvm; fi
	fi
	echo "$a"
}

main() {
	local OUT=$PWD/blelab-out TMO=900 K ACCEL ACCEL_ARGS rc t0 t1
	while [ $# -gt 0 ]; do
		case "$1" in
		--setup) setup; exit $? ;;
		--setup-bleak) setup_bleak; exit $? ;;
		--setup-bumble) setup_bumble; exit $? ;;
		-o) OUT=$2; shift 2 ;;
		-t) TMO=$2; shift 2 ;;
		--) shift; break ;;
		-h|--help) sed -n '2,/^set -uo/p' "$SELF" | grep '^#'; exit 0 ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || { log "no command given (see --help)"; exit 2; }
	[ "$(id -u)" = 0 ] || { log "run as root (the guest needs the host's files and qemu's 9p as root)"; exit 2; }
	if [ -z "$(kernel_version)" ] || ! [ -e "$LAB/initramfs.cpio.gz" ] || ! command -v qemu-system-x86_64 > /dev/null; then
		setup || { log "setup failed"; exit 125; }
	fi
	if [ "$SELF" -nt "$LAB/initramfs.cpio.gz" ] || [ "$ROOT/Tests/lab/mgmt_autoconfirm.c" -nt "$LAB/bin/mgmt_autoconfirm" ]; then
		build_agent && build_initramfs || exit 125
	fi
	if [ "${BLELAB_STOCK_BTVIRT:-0}" != 1 ] && { ! [ -x "$LAB/bin/btvirt" ] || [ "$ROOT/Tests/lab/btvirt-lab.patch" -nt "$LAB/bin/btvirt" ]; }; then
		build_btvirt || log "no lab btvirt: the stock one cannot carry two links on one controller (docs/LAB.md)"
	fi
	if ! [ -x "$LAB/bluez-new/bluetoothd" ]; then
		build_bluetoothd_new || log "no newer bluetoothd: the lab's checks through it will be skipped"
	fi
	K=$(kernel_version)
	mkdir -p "$OUT/.blelab" || exit 125
	OUT=$(readlink -f "$OUT")
	LAB=$(readlink -f "$LAB")
	case "$OUT$LAB$SELF" in *[[:space:]]*) log "OUTDIR, BLELAB_DIR and this script's path must not contain spaces"; exit 2 ;; esac
	rm -f "$OUT/.blelab/rc"
	printf '%q ' "$@" > "$OUT/.blelab/cmd.sh"
	echo >> "$OUT/.blelab/cmd.sh"
	pwd > "$OUT/.blelab/cwd"

	ACCEL=$(choose_accel)
	if [ "$ACCEL" = kvm ]; then ACCEL_ARGS=(-accel kvm -cpu host); else ACCEL_ARGS=(-accel tcg,thread=multi -cpu max); fi
	local QUIET="quiet loglevel=1"
	[ "${BLELAB_VERBOSE:-0}" = 1 ] && QUIET=""
	local BTV=${BLELAB_BTVIRT:-"-L -l4"} DISK_ARGS=() DISK=0
	if [ -n "${BLELAB_DISK:-}" ]; then
		[ -f "$BLELAB_DISK" ] || { log "BLELAB_DISK=$BLELAB_DISK is not a file"; exit 2; }
		# writeback: a guest flush reaches the image (qemu fdatasyncs it); unflushed guest writes reach at least
		# the host's page cache, which outlives qemu. Only the guest's own page cache is lost when it dies.
		DISK_ARGS=(-drive "file=$BLELAB_DISK,format=raw,if=virtio,cache=writeback"); DISK=1
	fi
	log "kernel $K, accel $ACCEL, out $OUT"
	t0=$(date +%s.%N)
	timeout "$TMO" qemu-system-x86_64 \
		-nodefaults -no-user-config -no-reboot \
		"${ACCEL_ARGS[@]}" -machine pc -m "${BLELAB_MEM:-2048}" -smp "$(nproc)" \
		-display none -serial stdio \
		-kernel "$LAB/kernel/boot/vmlinuz-$K" -initrd "$LAB/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 $QUIET blelab.stage2=$SELF blelab.out=$OUT blelab.btvirt=${BTV// /,} blelab.autoconfirm=${BLELAB_AUTOCONFIRM:-0} blelab.stockbtvirt=${BLELAB_STOCK_BTVIRT:-0} blelab.lab=$LAB blelab.disk=$DISK" \
		"${DISK_ARGS[@]}" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$OUT",mount_tag=out,security_model=none,multidevs=remap
	rc=$?
	t1=$(date +%s.%N)
	log "qemu exited ($rc) after $(awk "BEGIN{printf \"%.1f\", $t1-$t0}")s"
	if [ -s "$OUT/.blelab/rc" ]; then exit "$(cat "$OUT/.blelab/rc")"; fi
	log "the guest reported no exit status (timeout or crash)"
	exit 125
}

main "$@"
