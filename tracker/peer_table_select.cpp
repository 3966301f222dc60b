// Selection: uniform draws of sampleable peers, and the two reply forms.
#include "tracker/peer_table.hpp"

#include <cstring>

namespace sk {

template <class Prepare, class Emit4, class Emit6>
std::size_t peer_table::select(const peer_key& requester, std::size_t n, family_filter families,
                               Prepare&& prepare, Emit4&& emit4, Emit6&& emit6) {
  sync();
  // Only sampleable slots [0, active) take part; the requester's slot is
  // skipped when it is among them.
  std::uint32_t skip4 = none;
  std::uint32_t skip6 = none;
  if (const std::uint32_t i = locate(requester); i != none) {
    const hot_entry& h = hot_[i];
    if (!h.has(hot_quarantined)) {
      (requester.ip.v6 ? skip6 : skip4) = h.slot;
    }
  }
  auto avail4 = static_cast<std::uint32_t>(v4_.active - (skip4 != none));
  auto avail6 = static_cast<std::uint32_t>(v6_.active - (skip6 != none));
  if (families == family_filter::v4_only) {
    avail6 = 0;
  } else if (families == family_filter::v6_only) {
    avail4 = 0;
  }
  const auto total = static_cast<std::size_t>(avail4) + avail6;
  if (n > total) {
    n = total;
  }
  if (n == 0) {
    return 0;
  }

  // How many of the n come from each family: exactly as many as n draws
  // without replacement from the union would give (draw i picks IPv4 with
  // probability remaining4 / remaining). Conditioned on the split, a uniform
  // sample within each family makes the whole a uniform n-subset of the
  // union. Single-family swarms (the common case) skip the draws.
  std::uint32_t k4 = 0;
  if (avail6 == 0) {
    k4 = static_cast<std::uint32_t>(n);
  } else if (avail4 != 0) {
    std::uint32_t a = avail4;
    std::uint32_t b = avail6;
    for (std::size_t d = 0; d < n; ++d) {
      if (rng_.below(a + b) < a) {
        ++k4;
        --a;
      } else {
        --b;
      }
    }
  }
  const auto k6 = static_cast<std::uint32_t>(n - k4);
  prepare(k4, k6);

  // Sampling positions of a virtual array that lacks the requester's slot:
  // position p maps to slot p, or p + 1 from the requester's slot on.
  // Scratch for this draw only, shared by the tables on the thread (its
  // draws depend on the PRNG, size and count alone, not on the map).
  thread_local sparse_sampler sampler;
  sampler.draw(rng_, avail4, k4,
               [&](std::uint32_t p) { emit4(skip4 != none && p >= skip4 ? p + 1 : p); });
  sampler.draw(rng_, avail6, k6,
                [&](std::uint32_t p) { emit6(skip6 != none && p >= skip6 ? p + 1 : p); });
  return n;
}

std::size_t peer_table::select_compact(const peer_key& requester, std::size_t n,
                                       std::string& peers4, std::string& peers6,
                                       family_filter families) {
  // Grow each buffer once, then copy fixed-size entries (the compiler turns
  // a 6- or 18-byte memcpy into two moves; a variable-length append would
  // call memmove per peer).
  char* w4 = nullptr;
  char* w6 = nullptr;
  return select(
      requester, n, families,
      [&](std::uint32_t k4, std::uint32_t k6) {
        const std::size_t o4 = peers4.size();
        const std::size_t o6 = peers6.size();
        peers4.resize(o4 + 6 * static_cast<std::size_t>(k4));
        peers6.resize(o6 + 18 * static_cast<std::size_t>(k6));
        w4 = peers4.data() + o4;
        w6 = peers6.data() + o6;
      },
      [&](std::uint32_t slot) {
        std::memcpy(w4, v4_.compact.data() + static_cast<std::size_t>(slot) * 6, 6);
        w4 += 6;
      },
      [&](std::uint32_t slot) {
        std::memcpy(w6, v6_.compact.data() + static_cast<std::size_t>(slot) * 18, 18);
        w6 += 18;
      });
}

std::size_t peer_table::select_entries(const peer_key& requester, std::size_t n,
                                       std::vector<peer_entry>& out, family_filter families) {
  auto emit_from = [&](const family& f) {
    return [&out, &f, this](std::uint32_t slot) {
      const record& r = records_[f.owner[slot]];
      peer_entry e;
      e.id = r.id;
      e.ep.ip = r.ip;
      e.ep.port = r.port;
      out.push_back(e);
    };
  };
  auto prepare = [&](std::uint32_t k4, std::uint32_t k6) { out.reserve(out.size() + k4 + k6); };
  return select(requester, n, families, prepare, emit_from(v4_), emit_from(v6_));
}

}  // namespace sk
