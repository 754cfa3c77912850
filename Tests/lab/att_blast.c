/* att_blast.c - the lab's raw-socket goodput baseline: the least a sender can do over the kernel's LE ATT
 * channel (CID 4). msgpipe's goodput is reported against it (Scripts/lab-test.sh).
 *
 *   att_blast sink <local-bdaddr> [N]                  accept N centrals (default 1, served at once); answer
 *                                                       Exchange MTU (247) and Write Requests; count Write
 *                                                       Command bytes, per central when N > 1
 *   att_blast send <local-bdaddr> <remote-bdaddr> <bytes> [gate-fifo]
 *       connect, Exchange MTU 247, send <bytes> as Write Commands of MTU-3 bytes to handle 0x0003, then one
 *       Write Request; its response proves every command arrived. Prints "goodput N bytes/s". With a FIFO,
 *       it waits after connecting until a writer opens it, so several senders start together.
 * Build: gcc -O2 -Wall -o att_blast att_blast.c -lbluetooth
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int att_socket(const char *local)
{
	struct sockaddr_l2 a;
	int fd = socket(PF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
	if (fd < 0) { perror("socket"); exit(1); }
	memset(&a, 0, sizeof(a));
	a.l2_family = AF_BLUETOOTH;
	a.l2_cid = htobs(4);
	a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
	str2ba(local, &a.l2_bdaddr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("bind"); exit(1); }
	return fd;
}

/* One central at the sink: its socket and what it sent. */
struct sink_peer {
	int fd;
	long long bytes, commands;
	double first, last;
};

/* Answers one PDU from a central; false when the connection ended. */
static int sink_read(struct sink_peer *c)
{
	uint8_t buf[1024];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
	if (n <= 0) return 0;
	if (buf[0] == 0x52 && n >= 3) {
		if (!c->commands) c->first = now();
		c->last = now();
		c->commands++;
		c->bytes += n - 3;
	} else if (buf[0] == 0x02) {
		uint8_t rsp[3] = { 0x03, 247, 0 };
		send(c->fd, rsp, 3, 0);
	} else if (buf[0] == 0x12) {
		uint8_t rsp[1] = { 0x13 };
		send(c->fd, rsp, 1, 0);
	}
	return 1;
}

/* Accepts `count` centrals (served at once, with poll) and counts each one's Write Command bytes. */
static int sink(const char *local, int count)
{
	struct sink_peer peers[8];
	struct pollfd p[9];
	int srv = att_socket(local), accepted = 0, open = 0, i;
	long long bytes = 0, commands = 0;
	double first = 0, last = 0;

	if (count < 1 || count > 8) { fprintf(stderr, "att_blast: 1 to 8 centrals\n"); return 2; }
	if (listen(srv, count) < 0) { perror("listen"); return 1; }
	printf("att_blast: sink listening on %s\n", local);
	while (accepted < count || open > 0) {
		int n = 0;
		if (accepted < count) { p[n].fd = srv; p[n].events = POLLIN; n++; }
		for (i = 0; i < accepted; i++) { p[n].fd = peers[i].fd; p[n].events = POLLIN; n++; }
		if (poll(p, n, -1) < 0) { perror("poll"); return 1; }
		n = 0;
		if (accepted < count) {
			if (p[0].revents & POLLIN) {
				struct sink_peer *c = &peers[accepted];
				memset(c, 0, sizeof(*c));
				c->fd = accept(srv, NULL, NULL);
				if (c->fd < 0) { perror("accept"); return 1; }
				/* Write Commands have no flow control: on a loaded host a sink that reads slower than the
				 * central writes lost some to a full socket. The baseline measures the link, not this
				 * process, so its socket holds the whole blast (set before the MTU answer lets it start). */
				int size = 32 << 20;
				if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
					setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
				accepted++;
				open++;
			}
			n = 1;
		}
		for (i = 0; i < accepted; i++, n++) {
			if (peers[i].fd < 0 || !(p[n].revents & (POLLIN | POLLHUP | POLLERR))) continue;
			if (!sink_read(&peers[i])) { close(peers[i].fd); peers[i].fd = -1; open--; }
		}
	}
	for (i = 0; i < accepted; i++) {
		struct sink_peer *c = &peers[i];
		if (count > 1)
			printf("att_blast: sink central %d got %lld bytes over %.3f s\n", i + 1, c->bytes, c->last - c->first);
		bytes += c->bytes;
		commands += c->commands;
		if (c->commands && (!first || c->first < first)) first = c->first;
		if (c->last > last) last = c->last;
	}
	printf("att_blast: sink got %lld bytes in %lld write commands over %.3f s\n", bytes, commands, last - first);
	close(srv);
	return 0;
}

static int blast(const char *local, const char *remote, long long total, const char *gate)
{
	struct sockaddr_l2 a;
	uint8_t buf[600], rsp[64];
	int fd = att_socket(local), mtu = 23;
	long long sent = 0;
	double t0, t1;
	struct pollfd p = { .events = POLLIN };

	memset(&a, 0, sizeof(a));
	a.l2_family = AF_BLUETOOTH;
	a.l2_cid = htobs(4);
	a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
	str2ba(remote, &a.l2_bdaddr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("connect"); return 1; }
	p.fd = fd;
	buf[0] = 0x02; buf[1] = 247; buf[2] = 0;
	send(fd, buf, 3, 0);
	if (poll(&p, 1, 10000) == 1 && recv(fd, rsp, sizeof(rsp), 0) == 3 && rsp[0] == 0x03)
		mtu = (rsp[1] | rsp[2] << 8) < 247 ? (rsp[1] | rsp[2] << 8) : 247;
	printf("att_blast: connected, ATT_MTU %d\n", mtu);
	if (gate) {
		int g = open(gate, O_RDONLY);  /* returns once the script opens the FIFO for writing */
		if (g < 0) { perror("open gate"); return 1; }
		close(g);
	}
	t0 = now();
	buf[0] = 0x52; buf[1] = 0x03; buf[2] = 0x00;
	while (sent < total) {
		int chunk = total - sent < mtu - 3 ? (int)(total - sent) : mtu - 3;
		memset(buf + 3, (int)(sent & 0xff), chunk);
		if (send(fd, buf, 3 + chunk, 0) < 0) { perror("send"); return 1; }
		sent += chunk;
	}
	buf[0] = 0x12;
	send(fd, buf, 4, 0);
	for (;;) {
		if (poll(&p, 1, 60000) != 1) { fprintf(stderr, "att_blast: no Write Response\n"); return 1; }
		if (recv(fd, rsp, sizeof(rsp), 0) <= 0) { perror("recv"); return 1; }
		if (rsp[0] == 0x13) break;
	}
	t1 = now();
	printf("att_blast: sent %lld bytes in %.3f s: goodput %.0f bytes/s\n", sent, t1 - t0, sent / (t1 - t0));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "sink"))
		return sink(argv[2], argc == 4 ? atoi(argv[3]) : 1);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "send"))
		return blast(argv[2], argv[3], atoll(argv[4]), argc == 6 ? argv[5] : NULL);
	fprintf(stderr, "usage: %s sink LOCAL [N] | send LOCAL REMOTE BYTES [GATE]\n", argv[0]);
	return 2;
}
