/* openpgm_peer: an OpenPGM (libpgm 5.3) peer for rmcast's interop tests (issue 62).
 *
 *   openpgm_peer recv IFACE_ADDR GROUP UDP_PORT DPORT COUNT TIMEOUT_MS [REPLAY_FILE]
 *   openpgm_peer send IFACE_ADDR GROUP UDP_PORT DPORT SPORT LEN...
 *   openpgm_peer sink IFACE_ADDR GROUP UDP_PORT DPORT COUNT TIMEOUT_MS OUT_FILE
 *   openpgm_peer sendn IFACE_ADDR GROUP UDP_PORT DPORT SPORT N LEN
 *   openpgm_peer sendfile IFACE_ADDR GROUP UDP_PORT DPORT SPORT RATE_BPS FILE LINGER_MS
 *
 * Both open a PGM socket in OpenPGM's UDP encapsulation on the interface with address
 * IFACE_ADDR: unicast and multicast encapsulation ports both UDP_PORT, PGM data-destination
 * port DPORT.
 *
 * recv joins GROUP, receives COUNT APDUs and prints each on its own line in hex after
 * "apdu " (the library prints its own warnings on standard output too), then exits 0. It
 * exits 1 if TIMEOUT_MS passes first (after printing what it has), 2 on a setup error. With
 * REPLAY_FILE, once the socket is connected, a child process sends the datagrams in the file
 * (each a 2-byte big-endian length and that many bytes: PGM packets rmcast's codec wrote) to
 * GROUP:UDP_PORT from IFACE_ADDR, 2 ms apart, so the packets OpenPGM reads are exactly those
 * bytes.
 *
 * send sends one APDU per LEN to GROUP from TSI source port SPORT, with on-demand FEC parity
 * (transmission groups of 8) announced in its SPMs. Byte j of APDU i is (31·i + j) mod 251.
 * Each APDU should fit one TPDU: libpgm 5.3.128 crashed here in pgm_send of a 3,000-byte
 * APDU, with or without FEC. It lingers 500 ms for heartbeat SPMs, closes the socket
 * (flushing) and exits 0; 2 on a setup or send error.
 *
 * sink is recv writing the APDUs' bytes, concatenated, to OUT_FILE instead of hex lines, and
 * "sink: N APDUs, B bytes" to standard error (for interop transfers of many APDUs).
 *
 * sendn is send with N APDUs of LEN bytes each (the same pattern), a transmit window that
 * holds all of them and a linger of 3 s, so every NAK of a lossy transfer can be answered.
 *
 * sendfile is rmcast's benchmark contender (`rmcast bench net --tools openpgm`): it sends
 * FILE as APDUs of 1,400 bytes (the last one shorter), paced by OpenPGM's rate limiter at
 * RATE_BPS bits per second, with a transmit window holding the whole file, no FEC (rmcast's
 * pgm default: NAK and RDATA only) and a second thread answering NAKs while it sends (as
 * OpenPGM's daytime example does), then lingers LINGER_MS for the last NAKs and exits 0. A
 * PGM source cannot know who received what: the benchmark times the receivers (`sink` with
 * COUNT = the file's APDUs) and stops the sender.
 *
 * Both receivers keep a window of 4,000 sequence numbers (sink: at least COUNT + 16) and repeat an unconfirmed NAK after
 * 200 ms (an unanswered one after 400 ms).
 *
 * Diagnostics go to standard error. Built by crates/wire/tests/openpgm.rs:
 * cc openpgm_peer.c -pthread $(pkg-config --cflags --libs openpgm-5.3), and by
 * crates/bench/src/openpgm.rs for the benchmark.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pgm/pgm.h>

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Send every datagram of `file` to group:port from iface. Returns 0 on success. */
static int replay(const char *file, const char *iface, const char *group, int port)
{
	FILE *f = fopen(file, "rb");
	if (!f) {
		perror("replay: open");
		return 1;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct in_addr ifa;
	inet_pton(AF_INET, iface, &ifa);
	unsigned char loop = 1;
	setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof(ifa));
	setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop));
	struct sockaddr_in to;
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, group, &to.sin_addr);
	unsigned char len[2], buf[65536];
	int sent = 0;
	while (fread(len, 1, 2, f) == 2) {
		size_t n = ((size_t)len[0] << 8) | len[1];
		if (fread(buf, 1, n, f) != n) {
			fprintf(stderr, "replay: truncated file\n");
			return 1;
		}
		if (sendto(s, buf, n, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)n) {
			perror("replay: sendto");
			return 1;
		}
		sent++;
		usleep(2000);
	}
	fprintf(stderr, "replay: sent %d datagrams\n", sent);
	fclose(f);
	close(s);
	return 0;
}

/* Wait, after a pgm_recv that returned `status`, until the socket has something to read or
 * OpenPGM's next timer or rate slot is due (its pgmrecv example's loop), at most 100 ms. */
static void wait_socket(pgm_sock_t *sock, int status)
{
	struct timeval tv;
	socklen_t optlen = sizeof(tv);
	int timeout = 100;
	const int opt = status == PGM_IO_STATUS_TIMER_PENDING ? PGM_TIME_REMAIN
			: status == PGM_IO_STATUS_RATE_LIMITED ? PGM_RATE_REMAIN : -1;
	if (opt >= 0 && pgm_getsockopt(sock, IPPROTO_PGM, opt, &tv, &optlen)) {
		const long ms = tv.tv_sec * 1000L + (tv.tv_usec + 999) / 1000;
		timeout = ms < 100 ? (int)ms : 100;
	}
	struct pollfd fds[8];
	int n = 8;
	memset(fds, 0, sizeof(fds));
	if (pgm_poll_info(sock, fds, &n, POLLIN) < 0) {
		usleep(1000);
		return;
	}
	poll(fds, (nfds_t)n, timeout);
}

/* The socket buffers asked for (the kernel caps them at net.core.rmem_max/wmem_max). */
static const int socket_buffer = 4 * 1024 * 1024;

/* The receiver's window, in sequence numbers (sink raises it to hold COUNT APDUs). */
static int rxw_sqns = 4000;

/* Set the receiver's options (after OpenPGM's pgmrecv example). */
static void receiver_options(pgm_sock_t *sock)
{
	const int recv_only = 1, passive = 0, sqns = rxw_sqns,
		  peer_expiry = pgm_secs(300), spmr_expiry = pgm_msecs(250),
		  nak_bo_ivl = pgm_msecs(50), nak_rpt_ivl = pgm_msecs(200),
		  nak_rdata_ivl = pgm_msecs(400), nak_data_retries = 50, nak_ncf_retries = 50;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_RECV_ONLY, &recv_only, sizeof(recv_only));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_PASSIVE, &passive, sizeof(passive));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_RXW_SQNS, &sqns, sizeof(sqns));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_PEER_EXPIRY, &peer_expiry, sizeof(peer_expiry));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_SPMR_EXPIRY, &spmr_expiry, sizeof(spmr_expiry));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NAK_BO_IVL, &nak_bo_ivl, sizeof(nak_bo_ivl));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NAK_RPT_IVL, &nak_rpt_ivl, sizeof(nak_rpt_ivl));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NAK_RDATA_IVL, &nak_rdata_ivl, sizeof(nak_rdata_ivl));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NAK_DATA_RETRIES, &nak_data_retries, sizeof(nak_data_retries));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NAK_NCF_RETRIES, &nak_ncf_retries, sizeof(nak_ncf_retries));
	pgm_setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &socket_buffer, sizeof(socket_buffer));
}

/* The sender's transmit window, in sequence numbers (sendn and sendfile raise it), its rate
 * in bytes per second (sendfile sets it) and whether it announces on-demand FEC (sendfile
 * does not). */
static int txw_sqns = 100;
static int txw_max_rte = 10 * 1000 * 1000;
static int use_fec = 1;

/* Set the sender's options (after OpenPGM's pgmsend example), with on-demand FEC, k = 8. */
static void sender_options(pgm_sock_t *sock)
{
	const int send_only = 1, sqns = txw_sqns, max_rte = txw_max_rte,
		  ambient_spm = pgm_secs(30),
		  heartbeat_spm[] = { pgm_msecs(100), pgm_msecs(100), pgm_msecs(100), pgm_secs(1) };
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_SEND_ONLY, &send_only, sizeof(send_only));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_TXW_SQNS, &sqns, sizeof(sqns));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_TXW_MAX_RTE, &max_rte, sizeof(max_rte));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_AMBIENT_SPM, &ambient_spm, sizeof(ambient_spm));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_HEARTBEAT_SPM, &heartbeat_spm, sizeof(heartbeat_spm));
	pgm_setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &socket_buffer, sizeof(socket_buffer));
	if (!use_fec)
		return;
	struct pgm_fecinfo_t fec;
	memset(&fec, 0, sizeof(fec));
	fec.block_size = 255;
	fec.proactive_packets = 0;
	fec.group_size = 8;
	fec.ondemand_parity_enabled = TRUE;
	fec.var_pktlen_enabled = TRUE;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_USE_FEC, &fec, sizeof(fec));
}

/* A connected PGM socket (NULL on an error, said on standard error). */
static pgm_sock_t *open_sock(const char *iface, const char *group, int udp_port, int dport,
			     int sport, int sender)
{
	pgm_error_t *err = NULL;
	if (!pgm_init(&err)) {
		fprintf(stderr, "pgm_init: %s\n", err->message);
		return NULL;
	}
	char network[256];
	snprintf(network, sizeof(network), "%s;%s", iface, group);
	struct pgm_addrinfo_t *res = NULL;
	if (!pgm_getaddrinfo(network, NULL, &res, &err)) {
		fprintf(stderr, "pgm_getaddrinfo %s: %s\n", network, err->message);
		return NULL;
	}
	pgm_sock_t *sock = NULL;
	if (!pgm_socket(&sock, AF_INET, SOCK_SEQPACKET, IPPROTO_UDP, &err)) {
		fprintf(stderr, "pgm_socket: %s\n", err->message);
		return NULL;
	}
	const int mtu = 1500;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_UDP_ENCAP_UCAST_PORT, &udp_port, sizeof(udp_port));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_UDP_ENCAP_MCAST_PORT, &udp_port, sizeof(udp_port));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MTU, &mtu, sizeof(mtu));
	if (sender)
		sender_options(sock);
	else
		receiver_options(sock);
	struct pgm_sockaddr_t addr;
	memset(&addr, 0, sizeof(addr));
	addr.sa_port = (uint16_t)dport;
	addr.sa_addr.sport = (uint16_t)sport;
	if (!pgm_gsi_create_from_string(&addr.sa_addr.gsi, sender ? "openpgm_send" : "openpgm_recv", -1)) {
		fprintf(stderr, "pgm_gsi_create_from_string failed\n");
		return NULL;
	}
	struct pgm_interface_req_t if_req;
	memset(&if_req, 0, sizeof(if_req));
	if_req.ir_interface = res->ai_recv_addrs[0].gsr_interface;
	memcpy(&if_req.ir_address, &res->ai_send_addrs[0].gsr_addr, sizeof(struct sockaddr_storage));
	if (!pgm_bind3(sock, &addr, sizeof(addr), &if_req, sizeof(if_req), &if_req, sizeof(if_req), &err)) {
		fprintf(stderr, "pgm_bind3: %s\n", err->message);
		return NULL;
	}
	for (unsigned i = 0; i < res->ai_recv_addrs_len; i++)
		pgm_setsockopt(sock, IPPROTO_PGM, PGM_JOIN_GROUP, &res->ai_recv_addrs[i], sizeof(struct pgm_group_source_req));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_SEND_GROUP, &res->ai_send_addrs[0], sizeof(struct pgm_group_source_req));
	pgm_freeaddrinfo(res);
	const int loop = 1, hops = 16, nonblocking = sender ? 0 : 1;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MULTICAST_LOOP, &loop, sizeof(loop));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MULTICAST_HOPS, &hops, sizeof(hops));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_NOBLOCK, &nonblocking, sizeof(nonblocking));
	if (!pgm_connect(sock, &err)) {
		fprintf(stderr, "pgm_connect: %s\n", err->message);
		return NULL;
	}
	return sock;
}

/* recv: see the top. */
static int do_recv(int argc, char **argv)
{
	const char *iface = argv[2], *group = argv[3];
	const int udp_port = atoi(argv[4]), dport = atoi(argv[5]), count = atoi(argv[6]);
	const long timeout = atol(argv[7]);
	if (strcmp(argv[1], "sink") == 0 && count + 16 > rxw_sqns)
		rxw_sqns = count + 16;
	pgm_sock_t *sock = open_sock(iface, group, udp_port, dport, DEFAULT_DATA_SOURCE_PORT, 0);
	if (!sock)
		return 2;
	pid_t child = -1;
	if (argc > 8 && strcmp(argv[1], "recv") == 0) {
		child = fork();
		if (child == 0)
			_exit(replay(argv[8], iface, group, udp_port));
	}
	FILE *raw = NULL;
	if (strcmp(argv[1], "sink") == 0) {
		raw = fopen(argv[8], "wb");
		if (!raw) {
			perror("sink: open");
			return 2;
		}
	}
	const long deadline = now_ms() + timeout;
	size_t bytes = 0;
	static char buf[65536];
	pgm_error_t *err = NULL;
	int got = 0, rc = 1;
	while (now_ms() < deadline) {
		size_t len = 0;
		const int status = pgm_recv(sock, buf, sizeof(buf), 0, &len, &err);
		if (status == PGM_IO_STATUS_NORMAL && raw) {
			fwrite(buf, 1, len, raw);
			bytes += len;
			if (++got == count) {
				rc = 0;
				break;
			}
		} else if (status == PGM_IO_STATUS_NORMAL) {
			printf("apdu ");
			for (size_t i = 0; i < len; i++)
				printf("%02x", (unsigned char)buf[i]);
			printf("\n");
			fflush(stdout);
			if (++got == count) {
				rc = 0;
				break;
			}
		} else if (status == PGM_IO_STATUS_RESET) {
			fprintf(stderr, "pgm_recv: session reset (unrecoverable loss)\n");
			if (err) {
				pgm_error_free(err);
				err = NULL;
			}
		} else if (status == PGM_IO_STATUS_ERROR) {
			fprintf(stderr, "pgm_recv: error\n");
			break;
		} else {
			wait_socket(sock, status);
		}
	}
	if (child > 0) {
		int st = 0;
		waitpid(child, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 2;
	}
	if (raw) {
		fclose(raw);
		fprintf(stderr, "sink: %d APDUs, %zu bytes\n", got, bytes);
	}
	fprintf(stderr, "openpgm_peer recv: %d of %d APDUs\n", got, count);
	pgm_close(sock, FALSE);
	pgm_shutdown();
	return rc;
}

/* send: see the top. */
static int do_send(int argc, char **argv)
{
	pgm_sock_t *sock = open_sock(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), 1);
	if (!sock)
		return 2;
	static unsigned char buf[65536];
	for (int i = 7; i < argc; i++) {
		const size_t len = (size_t)atol(argv[i]);
		const int n = i - 7;
		for (size_t j = 0; j < len && j < sizeof(buf); j++)
			buf[j] = (unsigned char)((31 * (size_t)n + j) % 251);
		size_t sent = 0;
		if (pgm_send(sock, buf, len, &sent) != PGM_IO_STATUS_NORMAL || sent != len) {
			fprintf(stderr, "pgm_send of APDU %d (%zu bytes) failed\n", n, len);
			return 2;
		}
	}
	usleep(500 * 1000);
	pgm_close(sock, TRUE);
	pgm_shutdown();
	fprintf(stderr, "openpgm_peer send: %d APDUs\n", argc - 7);
	return 0;
}

/* sendn: see the top. */
static int do_sendn(char **argv)
{
	const int n = atoi(argv[7]);
	const size_t len = (size_t)atol(argv[8]);
	if (n <= 0 || len == 0 || len > 1400) {
		fprintf(stderr, "sendn: N > 0 APDUs of 1 to 1,400 bytes\n");
		return 2;
	}
	txw_sqns = n + 16;
	pgm_sock_t *sock = open_sock(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), 1);
	if (!sock)
		return 2;
	static unsigned char buf[1400];
	for (int i = 0; i < n; i++) {
		for (size_t j = 0; j < len; j++)
			buf[j] = (unsigned char)((31 * (size_t)i + j) % 251);
		size_t sent = 0;
		if (pgm_send(sock, buf, len, &sent) != PGM_IO_STATUS_NORMAL || sent != len) {
			fprintf(stderr, "pgm_send of APDU %d failed\n", i);
			return 2;
		}
	}
	/* Answer NAKs for a while: OpenPGM reads them (and sends its repairs and heartbeat
	 * SPMs) only inside pgm_recv, as its daytime example's NAK thread does. */
	const long until = now_ms() + 3000;
	pgm_error_t *err = NULL;
	while (now_ms() < until) {
		size_t got = 0;
		const int st = pgm_recv(sock, buf, sizeof(buf), MSG_DONTWAIT, &got, &err);
		(void)st;
		if (err) {
			pgm_error_free(err);
			err = NULL;
		}
		usleep(1000);
	}
	pgm_close(sock, TRUE);
	pgm_shutdown();
	fprintf(stderr, "openpgm_peer sendn: %d APDUs of %zu bytes\n", n, len);
	return 0;
}

/* sendfile's second thread: read the socket (NAKs, SPMRs; OpenPGM sends its repairs and
 * heartbeat SPMs from inside pgm_recv) until the main thread clears `answering`. */
static volatile int answering = 1;
static void *answer_naks(void *arg)
{
	pgm_sock_t *sock = arg;
	static char buf[1500];
	pgm_error_t *err = NULL;
	while (answering) {
		size_t got = 0;
		const int st = pgm_recv(sock, buf, sizeof(buf), MSG_DONTWAIT, &got, &err);
		if (err) {
			pgm_error_free(err);
			err = NULL;
		}
		if (st != PGM_IO_STATUS_NORMAL)
			wait_socket(sock, st);
	}
	return NULL;
}

/* sendfile: see the top. */
static int do_sendfile(char **argv)
{
	const double rate = atof(argv[7]);
	const long linger = atol(argv[9]);
	FILE *f = fopen(argv[8], "rb");
	if (!f) {
		perror("sendfile: open FILE");
		return 2;
	}
	if (fseek(f, 0, SEEK_END) != 0) {
		perror("sendfile: seek FILE");
		return 2;
	}
	const long size = ftell(f);
	rewind(f);
	const long n = (size + 1399) / 1400;
	if (size <= 0 || n > 1000 * 1000 || rate < 8000 || rate > 8e10 || linger < 0) {
		fprintf(stderr, "sendfile: FILE of 1 byte to 1.4 GB, RATE_BPS from 8,000 to 8e10, "
				"LINGER_MS >= 0\n");
		return 2;
	}
	txw_sqns = (int)n + 16;
	txw_max_rte = (int)(rate / 8);
	use_fec = 0;
	pgm_sock_t *sock = open_sock(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), 1);
	if (!sock)
		return 2;
	pthread_t answerer;
	if (pthread_create(&answerer, NULL, answer_naks, sock) != 0) {
		fprintf(stderr, "sendfile: cannot start the NAK thread\n");
		return 2;
	}
	static unsigned char buf[1400];
	int rc = 0;
	for (long i = 0; i < n; i++) {
		const size_t len = fread(buf, 1, sizeof(buf), f);
		size_t sent = 0;
		if (len == 0 || pgm_send(sock, buf, len, &sent) != PGM_IO_STATUS_NORMAL || sent != len) {
			fprintf(stderr, "sendfile: APDU %ld (%zu bytes) not sent\n", i, len);
			rc = 2;
			break;
		}
	}
	fclose(f);
	fprintf(stderr, "openpgm_peer sendfile: %ld APDUs, %ld bytes sent\n", n, size);
	const long until = now_ms() + linger;
	while (rc == 0 && now_ms() < until)
		usleep(10 * 1000);
	answering = 0;
	pthread_join(answerer, NULL);
	pgm_close(sock, TRUE);
	pgm_shutdown();
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 10 && strcmp(argv[1], "sendfile") == 0)
		return do_sendfile(argv);
	if (argc >= 9 && strcmp(argv[1], "sink") == 0)
		return do_recv(argc, argv);
	if (argc >= 9 && strcmp(argv[1], "sendn") == 0)
		return do_sendn(argv);
	if (argc >= 8 && strcmp(argv[1], "recv") == 0)
		return do_recv(argc, argv);
	if (argc >= 7 && strcmp(argv[1], "send") == 0)
		return do_send(argc, argv);
	fprintf(stderr, "usage: %s recv IFACE_ADDR GROUP UDP_PORT DPORT COUNT TIMEOUT_MS [REPLAY_FILE]\n"
			"       %s send IFACE_ADDR GROUP UDP_PORT DPORT SPORT LEN...\n", argv[0], argv[0]);
	return 2;
}
