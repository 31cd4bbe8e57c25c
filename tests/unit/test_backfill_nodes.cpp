// Backfill's node sets (models/sched/backfill_nodes.hpp), against plain sets of node ids:
//  - add_node_range, NodeSet::holds/remove/add/count agree with std::set arithmetic,
//    across word edges;
//  - ReservationList, fed reservations in random begin order on a minute grid (so that
//    windows often start exactly where reservations end and end where they begin),
//    gives each sliding window the partition less the nodes of the reservations it
//    overlaps (begin <= window end, end > window start), and tells which reservation
//    ends free a partition node (frees_at), as a brute-force pass over all
//    reservations does;
//  - the node-space table (add_reservation) keeps each minute's free nodes, in records
//    with no two equal neighbours and each with its nodes' hash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>

#include "models/sched/backfill_nodes.hpp"

using namespace gcsim;
using namespace gcsim::bf;

namespace {

std::set<int> members(const NodeSet& s, int n) {
  std::set<int> out;
  for (int i = 0; i < n; ++i)
    if (s.test(i)) out.insert(i);
  return out;
}

/// Random nodes as ranges: some inside one word, some across words, some single.
NodeWords random_nodes(std::mt19937_64& rng, int n, std::set<int>& ids) {
  NodeWords w;
  int at = static_cast<int>(rng() % 40);
  while (at < n) {
    const int len = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 90) : 1 + static_cast<int>(rng() % 3);
    const int last = std::min(n - 1, at + len - 1);
    add_node_range(w, at, last);
    for (int i = at; i <= last; ++i) ids.insert(i);
    at = last + 2 + static_cast<int>(rng() % 120);
  }
  if (ids.empty()) {
    add_node_range(w, n - 1, n - 1);
    ids.insert(n - 1);
  }
  return w;
}

}  // namespace

TEST_CASE("node sets agree with plain set arithmetic", "[slurm][backfill]") {
  const int n = 300;  // 5 words, the last one partial
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::set<int> a_ids, b_ids;
    const NodeWords a = random_nodes(rng, n, a_ids), b = random_nodes(rng, n, b_ids);
    for (size_t i = 1; i < a.size(); ++i) REQUIRE(a[i - 1].first < a[i].first);  // each word once, in order
    NodeSet s(n);
    s.add(a);
    REQUIRE(members(s, n) == a_ids);
    CHECK(s.count() == static_cast<int>(a_ids.size()));
    const int size = static_cast<int>(a_ids.size());
    for (int k : {0, 1, size - 1, size, size + 1}) CHECK(s.has_at_least(k) == (size >= k));
    CHECK(s.holds(a));
    const bool b_in_a = std::includes(a_ids.begin(), a_ids.end(), b_ids.begin(), b_ids.end());
    CHECK(s.holds(b) == b_in_a);
    NodeSet hashed = s;  // the same removal, keeping a hash in step
    uint64_t h = s.hash();
    s.remove(b);
    hashed.remove(b, &h);
    CHECK(hashed == s);
    CHECK(h == s.hash());
    std::set<int> diff;
    std::set_difference(a_ids.begin(), a_ids.end(), b_ids.begin(), b_ids.end(), std::inserter(diff, diff.end()));
    CHECK(members(s, n) == diff);
    NodeSet all(n), minus(n);
    for (int i = 0; i < n; ++i) all.set(i);
    minus.assign_minus(all, s);
    CHECK(minus.count() == n - static_cast<int>(diff.size()));
  }
}

TEST_CASE("reservation windows give the partition less the reservations they overlap", "[slurm][backfill]") {
  const int n = 300;
  const SimTime now = SimTime::seconds(6000);
  auto minute = [](int64_t k) { return SimTime::seconds(60 * k); };
  std::mt19937_64 rng(17);
  NodeSet part(n);
  for (int i = 0; i < n; ++i)
    if (i % 7 != 3) part.set(i);  // a partition that leaves some nodes out
  int checked = 0, left = 0, entered = 0, moves = 0, frees = 0, held = 0;
  for (int cycle = 0; cycle < 20; ++cycle) {
    struct Plain {
      SimTime begin, end;
      std::set<int> nodes;
    };
    std::vector<Plain> plain;
    ReservationList list(n, now);
    NodeSet cand(n);
    for (int k = 0; k < 60; ++k) {
      // a reservation from the cycle's start minute on (all end after now)
      const SimTime begin = now + minute(static_cast<int64_t>(rng() % 40));
      const SimTime end = begin + minute(1 + static_cast<int64_t>(rng() % 30));
      std::set<int> ids;
      NodeWords w = random_nodes(rng, n, ids);
      list.add(begin, end, std::move(w));
      plain.push_back(Plain{begin, end, ids});
      // a tested job: its window slides forward, as backfill's attempts do
      const SimTime limit = minute(1 + static_cast<int64_t>(rng() % 20));
      list.start(limit, part, cand);
      REQUIRE(list.cand_hash() == cand.hash());
      SimTime start = now;
      for (int step = 0; step < 12; ++step) {
        const SimTime end_w = start + limit;
        const std::set<int> before = members(cand, n);
        const bool moved = list.slide(start, end_w, part, cand);
        std::set<int> want;
        for (int i = 0; i < n; ++i)
          if (part.test(i)) want.insert(i);
        for (const auto& p : plain) {
          if (p.begin <= end_w && p.end > start)
            for (int i : p.nodes) want.erase(i);
          left += p.end == start;
          entered += p.begin == end_w;
        }
        REQUIRE(members(cand, n) == want);
        REQUIRE(list.cand_hash() == cand.hash());  // kept as the words change
        if (!moved) CHECK(before == want);  // unmoved: the candidates stayed
        moves += moved;
        ++checked;
        start += minute(static_cast<int64_t>(rng() % 6));
      }
      // the minutes where a reservation ends, in order: does one free a partition node
      // that no reservation holds from there on?
      size_t pos = ReservationList::kNoPos;
      for (int64_t m = 1; m <= 70; ++m) {
        const SimTime b = now + minute(m);
        NodeSet after(n);
        bool want = false;
        for (int i = 0; i < n; ++i) after.set(i);
        for (const auto& p : plain)
          if (p.begin <= b && b < p.end)
            for (int i : p.nodes) after.remove(NodeWords{{static_cast<size_t>(i) >> 6, uint64_t{1} << (i & 63)}});
        for (const auto& p : plain)
          if (p.end == b)
            for (int i : p.nodes) want |= part.test(i) && after.test(i);
        CHECK(list.frees_at(b, part, after, &pos) == want);
        frees += want;
        held += !want && std::any_of(plain.begin(), plain.end(), [&](const Plain& p) { return p.end == b; });
      }
    }
  }
  CHECK(checked > 10000);
  CHECK(left > 100);     // windows that start where a reservation ends
  CHECK(entered > 100);  // and end where one begins
  CHECK(moves > 100);    // and slides that moved the window's reservations (or not)
  CHECK(frees > 100);    // ends that free a partition node
  CHECK(held > 100);     // and ends whose nodes another reservation (or none of the partition) keeps
  CHECK(checked > moves);
  CHECK_THROWS_AS(ReservationList(n, now).add(now - minute(2), now, NodeWords{{0, 1}}), std::logic_error);
}

TEST_CASE("the node-space table keeps each minute's free nodes in merged records", "[slurm][backfill]") {
  // Reservations on a minute grid, some reaching past the table's end, added to a table
  // of an hour; after each: the records tile the hour, each record's nodes are those no
  // reservation holds at any of its minutes, its hash is its nodes' hash, and no two
  // neighbours are equal (merged, as backfill's later_start walk expects).
  const int n = 300;
  auto minute = [](int64_t k) { return SimTime::seconds(60 * k); };
  std::mt19937_64 rng(29);
  int shrunk = 0, splits = 0;
  for (int cycle = 0; cycle < 10; ++cycle) {
    NodeSet all(n);
    for (int i = 0; i < n; ++i) all.set(i);
    std::vector<Slot> table{Slot{minute(0), minute(60), all, all.hash()}};
    std::vector<std::pair<std::pair<int64_t, int64_t>, std::set<int>>> plain;
    for (int k = 0; k < 40; ++k) {
      const int64_t b = static_cast<int64_t>(rng() % 60);
      const int64_t e = b + 1 + static_cast<int64_t>(rng() % 30);
      std::set<int> ids;
      const NodeWords w = random_nodes(rng, n, ids);
      const size_t before = table.size();
      add_reservation(table, minute(b), minute(e), w);
      plain.push_back({{b, e}, ids});
      splits += table.size() > before;
      shrunk += table.size() < before;  // merges outnumbered cuts
      REQUIRE(table.front().begin == minute(0));
      REQUIRE(table.back().end == minute(60));
      for (size_t i = 0; i < table.size(); ++i) {
        const Slot& sl = table[i];
        REQUIRE(sl.begin < sl.end);
        if (i > 0) {
          REQUIRE(table[i - 1].end == sl.begin);
          REQUIRE_FALSE(table[i - 1].avail == sl.avail);
        }
        REQUIRE(sl.hash == sl.avail.hash());
        for (SimTime t = sl.begin; t < sl.end; t += minute(1)) {
          std::set<int> want = members(all, n);
          for (const auto& [span, nodes] : plain)
            if (minute(span.first) <= t && t < minute(span.second))
              for (int id : nodes) want.erase(id);
          REQUIRE(members(sl.avail, n) == want);
        }
      }
    }
  }
  CHECK(splits > 100);
  CHECK(shrunk > 10);
}
