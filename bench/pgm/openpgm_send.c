/* openpgm_send: an OpenPGM (libpgm 5.3) sender for rmcast's interop tests (issue 62).
 *
 *   openpgm_send IFACE_ADDR GROUP UDP_PORT DPORT SPORT LEN...
 *
 * Sends one APDU per LEN (each at most one TPDU: libpgm 5.3.128 crashed here in pgm_send
 * of a 3,000-byte APDU, with or without FEC) to GROUP with a PGM socket in OpenPGM's UDP encapsulation
 * (unicast and multicast encapsulation ports both UDP_PORT, PGM data-destination port DPORT,
 * TSI source port SPORT), on-demand FEC parity with transmission groups of 8 announced in
 * its SPMs. Byte j of APDU i is (31·i + j) mod 251. It lingers 500 ms for heartbeat SPMs,
 * closes the socket (flushing), and exits 0; 2 on a setup or send error.
 *
 * Built by crates/wire/tests/openpgm.rs: cc openpgm_send.c $(pkg-config --cflags --libs
 * openpgm-5.3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pgm/pgm.h>

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: %s IFACE_ADDR GROUP UDP_PORT DPORT SPORT LEN...\n", argv[0]);
		return 2;
	}
	const char *iface = argv[1], *group = argv[2];
	const int udp_port = atoi(argv[3]), dport = atoi(argv[4]), sport = atoi(argv[5]);
	pgm_error_t *err = NULL;
	if (!pgm_init(&err)) {
		fprintf(stderr, "pgm_init: %s\n", err->message);
		return 2;
	}
	char network[256];
	snprintf(network, sizeof(network), "%s;%s", iface, group);
	struct pgm_addrinfo_t *res = NULL;
	if (!pgm_getaddrinfo(network, NULL, &res, &err)) {
		fprintf(stderr, "pgm_getaddrinfo %s: %s\n", network, err->message);
		return 2;
	}
	pgm_sock_t *sock = NULL;
	if (!pgm_socket(&sock, AF_INET, SOCK_SEQPACKET, IPPROTO_UDP, &err)) {
		fprintf(stderr, "pgm_socket: %s\n", err->message);
		return 2;
	}
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_UDP_ENCAP_UCAST_PORT, &udp_port, sizeof(udp_port));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_UDP_ENCAP_MCAST_PORT, &udp_port, sizeof(udp_port));
	const int send_only = 1, mtu = 1500, sqns = 100, max_rte = 10 * 1000 * 1000,
		  ambient_spm = pgm_secs(30),
		  heartbeat_spm[] = { pgm_msecs(100), pgm_msecs(100), pgm_msecs(100), pgm_secs(1) };
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_SEND_ONLY, &send_only, sizeof(send_only));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MTU, &mtu, sizeof(mtu));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_TXW_SQNS, &sqns, sizeof(sqns));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_TXW_MAX_RTE, &max_rte, sizeof(max_rte));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_AMBIENT_SPM, &ambient_spm, sizeof(ambient_spm));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_HEARTBEAT_SPM, &heartbeat_spm, sizeof(heartbeat_spm));
	struct pgm_fecinfo_t fec;
	memset(&fec, 0, sizeof(fec));
	fec.block_size = 255;
	fec.proactive_packets = 0;
	fec.group_size = 8;
	fec.ondemand_parity_enabled = TRUE;
	fec.var_pktlen_enabled = TRUE;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_USE_FEC, &fec, sizeof(fec));

	struct pgm_sockaddr_t addr;
	memset(&addr, 0, sizeof(addr));
	addr.sa_port = (uint16_t)dport;
	addr.sa_addr.sport = (uint16_t)sport;
	if (!pgm_gsi_create_from_string(&addr.sa_addr.gsi, "openpgm_send", -1)) {
		fprintf(stderr, "pgm_gsi_create_from_string failed\n");
		return 2;
	}
	struct pgm_interface_req_t if_req;
	memset(&if_req, 0, sizeof(if_req));
	if_req.ir_interface = res->ai_recv_addrs[0].gsr_interface;
	memcpy(&if_req.ir_address, &res->ai_send_addrs[0].gsr_addr, sizeof(struct sockaddr_storage));
	if (!pgm_bind3(sock, &addr, sizeof(addr), &if_req, sizeof(if_req), &if_req, sizeof(if_req), &err)) {
		fprintf(stderr, "pgm_bind3: %s\n", err->message);
		return 2;
	}
	for (unsigned i = 0; i < res->ai_recv_addrs_len; i++)
		pgm_setsockopt(sock, IPPROTO_PGM, PGM_JOIN_GROUP, &res->ai_recv_addrs[i], sizeof(struct pgm_group_source_req));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_SEND_GROUP, &res->ai_send_addrs[0], sizeof(struct pgm_group_source_req));
	pgm_freeaddrinfo(res);
	const int loop = 1, hops = 16;
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MULTICAST_LOOP, &loop, sizeof(loop));
	pgm_setsockopt(sock, IPPROTO_PGM, PGM_MULTICAST_HOPS, &hops, sizeof(hops));
	if (!pgm_connect(sock, &err)) {
		fprintf(stderr, "pgm_connect: %s\n", err->message);
		return 2;
	}
	static unsigned char buf[65536];
	for (int i = 6; i < argc; i++) {
		const size_t len = (size_t)atol(argv[i]);
		const int n = i - 6;
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
	fprintf(stderr, "openpgm_send: %d APDUs\n", argc - 6);
	return 0;
}
