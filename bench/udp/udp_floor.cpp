// The I/O floor of a BEP 15 tracker (bench/udp/README.md, "The I/O floor").
//
//   udp_floor --port=P --io=plain|mmsg|uring [--peers=50]
//
// A responder that does nothing but the datagram I/O of a UDP tracker: a
// connect gets a connection id, an announce a fixed reply of `--peers`
// IPv4 peers, a scrape one zeroed entry per hash, anything else an error
// reply; no swarm, no state. Run under udp_loadgen like a tracker, its CPU
// time per response is what the kernel and the chosen way of reading and
// writing datagrams cost alone, the part no tracker can save on.
//
//   plain  one blocking recvfrom and one sendto per datagram (the calls
//          opentracker makes, without its poll)
//   mmsg   blocking recvmmsg of up to 32 datagrams (MSG_WAITFORONE), then
//          one sendmmsg of their replies: the calls swarmkeeper's UDP
//          worker makes
//   uring  io_uring (liburing): one multishot recvmsg into a ring of
//          provided buffers, a sendmsg per reply, every reply of one pass
//          over the completions submitted together with the wait for the
//          next ones (single issuer, deferred task work when the kernel
//          has them)
//
// Prints "ready" once the socket is bound; SIGTERM or SIGINT ends it with
// status 0 and a "served N" line. Binds 127.0.0.1 only.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef SK_HAVE_LIBURING
#include <liburing.h>
#endif

namespace {

volatile sig_atomic_t stopping = 0;
void on_signal(int) { stopping = 1; }

std::uint32_t read32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
void write32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}

constexpr std::size_t datagram_max = 2048;
constexpr std::uint64_t protocol_magic = 0x41727101980ULL;

/// The reply to one request in `out` (at least datagram_max bytes); its
/// length, 0 for a packet too short to carry a transaction id.
class responder {
 public:
  explicit responder(unsigned peers) {
    // A fixed announce reply: interval 1800, 0 leechers, `peers` seeders
    // at 127.0.0.1, ports 10000 + i.
    announce_.assign(20 + 6 * static_cast<std::size_t>(peers), 0);
    write32(announce_.data(), 1);
    write32(announce_.data() + 8, 1800);
    write32(announce_.data() + 16, peers);
    for (unsigned i = 0; i < peers; ++i) {
      unsigned char* p = announce_.data() + 20 + 6 * static_cast<std::size_t>(i);
      p[0] = 127;
      p[3] = 1;
      p[4] = static_cast<unsigned char>((10000 + i) >> 8);
      p[5] = static_cast<unsigned char>(10000 + i);
    }
  }

  std::size_t answer(const unsigned char* in, std::size_t len, unsigned char* out) const {
    if (len < 16) {
      return 0;
    }
    const std::uint32_t action = read32(in + 8);
    const std::uint32_t transaction = read32(in + 12);
    if (action == 0 && len >= 16 &&
        ((std::uint64_t{read32(in)} << 32) | read32(in + 4)) == protocol_magic) {
      write32(out, 0);
      write32(out + 4, transaction);
      write32(out + 8, 0x5eed0000u);  // the connection id: any value serves
      write32(out + 12, transaction);
      return 16;
    }
    if (action == 1 && len >= 98) {
      std::memcpy(out, announce_.data(), announce_.size());
      write32(out + 4, transaction);
      return announce_.size();
    }
    if (action == 2 && len >= 36) {
      const std::size_t hashes = (len - 16) / 20;
      std::memset(out, 0, 8 + 12 * hashes);
      write32(out, 2);
      write32(out + 4, transaction);
      return 8 + 12 * hashes;
    }
    static const char text[] = "unknown action";
    write32(out, 3);
    write32(out + 4, transaction);
    std::memcpy(out + 8, text, sizeof text - 1);
    return 8 + sizeof text - 1;
  }

 private:
  std::vector<unsigned char> announce_;
};

int bound_socket(int port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    std::perror("udp_floor: socket");
    return -1;
  }
  const int size = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  // A blocked receive returns every 200 ms, so a stop signal that arrives
  // between the loop's check and the call is seen soon after.
  timeval wake{};
  wake.tv_usec = 200000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("udp_floor: bind");
    ::close(fd);
    return -1;
  }
  return fd;
}

std::uint64_t serve_plain(int fd, const responder& r) {
  std::uint64_t served = 0;
  unsigned char in[datagram_max];
  unsigned char out[datagram_max];
  while (!stopping) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(fd, in, sizeof in, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      continue;  // EINTR (a signal), the 200 ms timeout, or an ICMP error of an earlier send
    }
    const std::size_t len = r.answer(in, static_cast<std::size_t>(n), out);
    if (len != 0 && ::sendto(fd, out, len, 0, reinterpret_cast<sockaddr*>(&from), from_len) >= 0) {
      ++served;
    }
  }
  return served;
}

std::uint64_t serve_mmsg(int fd, const responder& r) {
  constexpr unsigned batch = 32;
  std::uint64_t served = 0;
  std::vector<unsigned char> in(batch * datagram_max);
  std::vector<unsigned char> out(batch * datagram_max);
  std::array<sockaddr_storage, batch> from{};
  std::array<iovec, batch> in_iov{};
  std::array<iovec, batch> out_iov{};
  std::array<mmsghdr, batch> rx{};
  std::array<mmsghdr, batch> tx{};
  while (!stopping) {
    for (unsigned k = 0; k < batch; ++k) {
      in_iov[k] = {in.data() + k * datagram_max, datagram_max};
      rx[k].msg_hdr = {};
      rx[k].msg_hdr.msg_name = &from[k];
      rx[k].msg_hdr.msg_namelen = sizeof from[k];
      rx[k].msg_hdr.msg_iov = &in_iov[k];
      rx[k].msg_hdr.msg_iovlen = 1;
    }
    const int got = ::recvmmsg(fd, rx.data(), batch, MSG_WAITFORONE, nullptr);
    if (got <= 0) {
      continue;
    }
    unsigned n = 0;
    for (int k = 0; k < got; ++k) {
      unsigned char* o = out.data() + static_cast<std::size_t>(n) * datagram_max;
      const std::size_t len = r.answer(in.data() + static_cast<std::size_t>(k) * datagram_max, rx[k].msg_len, o);
      if (len == 0) {
        continue;
      }
      out_iov[n] = {o, len};
      tx[n].msg_hdr = {};
      tx[n].msg_hdr.msg_name = &from[k];
      tx[n].msg_hdr.msg_namelen = rx[k].msg_hdr.msg_namelen;
      tx[n].msg_hdr.msg_iov = &out_iov[n];
      tx[n].msg_hdr.msg_iovlen = 1;
      ++n;
    }
    for (unsigned done = 0; done < n;) {
      const int sent = ::sendmmsg(fd, tx.data() + done, n - done, 0);
      if (sent <= 0) {
        ++done;  // this datagram's destination refused it; go on with the rest
        continue;
      }
      served += static_cast<std::uint64_t>(sent);
      done += static_cast<unsigned>(sent);
    }
  }
  return served;
}

#ifdef SK_HAVE_LIBURING

std::uint64_t serve_uring(int fd, const responder& r) {
  constexpr unsigned entries = 512;   // submission queue; completions 2x
  constexpr unsigned buffers = 256;   // provided receive buffers (a power of two)
  constexpr unsigned slots = 256;     // replies in flight
  constexpr unsigned short group = 0;
  constexpr std::uint64_t recv_tag = ~std::uint64_t{0};

  io_uring ring{};
  io_uring_params p{};
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  int rc = io_uring_queue_init_params(entries, &ring, &p);
  if (rc == -EINVAL) {  // a kernel older than 6.1
    p = {};
    p.flags = IORING_SETUP_COOP_TASKRUN;
    rc = io_uring_queue_init_params(entries, &ring, &p);
  }
  if (rc < 0) {
    std::fprintf(stderr, "udp_floor: io_uring_queue_init_params: %s\n", std::strerror(-rc));
    std::exit(2);
  }

  // The provided-buffer ring: `buffers` entries, each naming one
  // datagram_max-byte buffer of `pool`.
  const std::size_t ring_bytes = buffers * sizeof(io_uring_buf);
  void* mem = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("udp_floor: mmap");
    std::exit(2);
  }
  auto* br = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(br);
  reg.ring_entries = buffers;
  reg.bgid = group;
  if ((rc = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
    std::fprintf(stderr, "udp_floor: io_uring_register_buf_ring: %s\n", std::strerror(-rc));
    std::exit(2);
  }
  std::vector<unsigned char> pool(static_cast<std::size_t>(buffers) * datagram_max);
  const int mask = io_uring_buf_ring_mask(buffers);
  for (unsigned b = 0; b < buffers; ++b) {
    io_uring_buf_ring_add(br, pool.data() + static_cast<std::size_t>(b) * datagram_max, datagram_max,
                          static_cast<unsigned short>(b), mask, static_cast<int>(b));
  }
  io_uring_buf_ring_advance(br, static_cast<int>(buffers));

  // The template of the multishot receive: each completion's buffer holds
  // an io_uring_recvmsg_out, the source address, then the payload.
  msghdr recv_template{};
  recv_template.msg_namelen = sizeof(sockaddr_storage);
  auto arm_receive = [&] {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_recvmsg_multishot(sqe, fd, &recv_template, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = group;
    io_uring_sqe_set_data64(sqe, recv_tag);
  };

  struct send_slot {
    sockaddr_storage to{};
    iovec iov{};
    msghdr msg{};
    unsigned char bytes[datagram_max];
  };
  std::vector<send_slot> slot(slots);
  std::vector<unsigned> free_slots;
  free_slots.reserve(slots);
  for (unsigned s = slots; s > 0; --s) {
    free_slots.push_back(s - 1);
  }

  std::uint64_t served = 0;
  std::uint64_t dropped = 0;
  arm_receive();
  while (!stopping) {
    // Returns after 200 ms without a completion, so a stop signal that
    // arrives between the loop's check and the wait is seen soon after.
    __kernel_timespec wake{};
    wake.tv_nsec = 200000000;
    io_uring_cqe* first = nullptr;
    rc = io_uring_submit_and_wait_timeout(&ring, &first, 1, &wake, nullptr);
    if (rc < 0 && rc != -EINTR && rc != -EBUSY && rc != -ETIME) {
      std::fprintf(stderr, "udp_floor: io_uring_submit_and_wait_timeout: %s\n", std::strerror(-rc));
      break;
    }
    unsigned head = 0;
    unsigned seen = 0;
    unsigned returned = 0;
    bool rearm = false;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag != recv_tag) {  // a reply went out (or failed)
        served += cqe->res >= 0;
        free_slots.push_back(static_cast<unsigned>(tag));
        continue;
      }
      if ((cqe->flags & IORING_CQE_F_MORE) == 0) {
        // The multishot receive ended: for want of buffers (given back
        // below) it is armed again; any other error would end it again at
        // once, so it ends the loop (a kernel without multishot recvmsg).
        if (cqe->res < 0 && cqe->res != -ENOBUFS) {
          std::fprintf(stderr, "udp_floor: multishot recvmsg: %s\n", std::strerror(-cqe->res));
          stopping = 1;
        } else {
          rearm = true;
        }
      }
      if (cqe->res < 0 || (cqe->flags & IORING_CQE_F_BUFFER) == 0) {
        continue;
      }
      const auto b = static_cast<unsigned short>(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
      unsigned char* buf = pool.data() + static_cast<std::size_t>(b) * datagram_max;
      io_uring_recvmsg_out* o = io_uring_recvmsg_validate(buf, cqe->res, &recv_template);
      if (o != nullptr && (o->flags & MSG_TRUNC) == 0) {
        if (free_slots.empty()) {
          ++dropped;
        } else {
          const unsigned s = free_slots.back();
          send_slot& out = slot[s];
          const auto* payload = static_cast<const unsigned char*>(io_uring_recvmsg_payload(o, &recv_template));
          const std::size_t len = r.answer(
              payload, io_uring_recvmsg_payload_length(o, cqe->res, &recv_template), out.bytes);
          io_uring_sqe* sqe = len == 0 ? nullptr : io_uring_get_sqe(&ring);
          if (sqe != nullptr) {
            free_slots.pop_back();
            const socklen_t name_len = std::min<socklen_t>(o->namelen, sizeof out.to);
            std::memcpy(&out.to, io_uring_recvmsg_name(o), name_len);
            out.iov = {out.bytes, len};
            out.msg = {};
            out.msg.msg_name = &out.to;
            out.msg.msg_namelen = name_len;
            out.msg.msg_iov = &out.iov;
            out.msg.msg_iovlen = 1;
            io_uring_prep_sendmsg(sqe, fd, &out.msg, 0);
            io_uring_sqe_set_data64(sqe, s);
          } else if (len != 0) {
            ++dropped;  // no submission entry free until the next submit
          }
        }
      }
      io_uring_buf_ring_add(br, buf, datagram_max, b, mask, static_cast<int>(returned++));
    }
    io_uring_cq_advance(&ring, seen);
    if (returned != 0) {
      io_uring_buf_ring_advance(br, static_cast<int>(returned));
    }
    if (rearm && !stopping) {
      arm_receive();
    }
  }
  if (dropped != 0) {
    std::fprintf(stderr, "udp_floor: %llu replies dropped (no free send slot or submission entry)\n",
                 static_cast<unsigned long long>(dropped));
  }
  io_uring_queue_exit(&ring);
  return served;
}

#endif

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "udp_floor: %s\n"
               "usage: udp_floor --port=P --io=plain|mmsg|uring [--peers=50]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  std::string io;
  unsigned peers = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string k = a.substr(0, eq);
    const std::string v = eq == std::string::npos ? "" : a.substr(eq + 1);
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    const bool number = !v.empty() && end != nullptr && *end == '\0';
    if (k == "--port" && number && n >= 1 && n <= 65535) {
      port = static_cast<int>(n);
    } else if (k == "--peers" && number && n <= 300) {
      peers = static_cast<unsigned>(n);
    } else if (k == "--io" && (v == "plain" || v == "mmsg" || v == "uring")) {
      io = v;
    } else {
      usage(("bad argument: " + a).c_str());
    }
  }
#ifndef SK_HAVE_LIBURING
  if (io == "uring") {
    usage("built without liburing (install liburing-dev and rebuild)");
  }
#endif
  if (port == 0 || io.empty()) {
    usage("--port and --io are required");
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: a blocked receive returns EINTR
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  const int fd = bound_socket(port);
  if (fd < 0) {
    return 2;
  }
  const responder r(peers);
  std::printf("ready\n");
  std::fflush(stdout);
  std::uint64_t served = 0;
  if (io == "plain") {
    served = serve_plain(fd, r);
  } else if (io == "mmsg") {
    served = serve_mmsg(fd, r);
  }
#ifdef SK_HAVE_LIBURING
  else {
    served = serve_uring(fd, r);
  }
#endif
  std::printf("served %llu\n", static_cast<unsigned long long>(served));
  ::close(fd);
  return 0;
}
