// Contention check of a tree schedule (paper 003, section 3: two messages of one phase
// contend when their paths share a directed link).
//
// Walking every path costs the path's length per message: 48 edges on average on a deep
// 4096-machine tree, 0.8 G edge visits for the 16.8 M messages of its AAPC. The check here
// costs O(1) per message after a sort by DFS position:
// - A message src -> dst climbs on up-links from src to just below a = lca(src, dst) and
//   comes down on down-links from just below a to dst. Each half is a vertical segment:
//   the nodes whose up-link (resp. down-link) it uses, from a bottom machine b (src, resp.
//   dst) up to depth(a) + 1, its "reach".
// - Two messages share an up-link iff their up segments share a node, i.e. iff
//   depth(lca(b_i, b_j)) >= max(reach_i, reach_j); the same for down-links.
// - With the machines in DFS preorder, depth(lca) of two of them is the minimum of the
//   lca depths of neighbours between them (a sparse table answers it in O(1)), and one
//   pass over a round's segments in preorder with a stack finds whether any two meet.
// When a round fails, the paths of that round are walked to name the messages and the link.
// On trees whose paths average up to 3 links (one switch) walking them all is cheaper.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libcomm/tree_schedule.hpp"
#include "tree_index.hpp"

namespace libcomm {

namespace {

// Walks the paths of the messages of one round; names every shared link.
class PathWalkingChecker {
 public:
  explicit PathWalkingChecker(const Topology& t)
      : t_(t),
        stamp_(static_cast<std::size_t>(t.num_edge_ids()), -1),
        user_(static_cast<std::size_t>(t.num_edge_ids()), {-1, -1}) {}

  void check(std::int64_t round, int src_m, int dst_m, VerifyResult& res) {
    if (src_m == dst_m) return;
    path_.clear();
    t_.path_edge_ids(t_.machine_node(src_m), t_.machine_node(dst_m), path_);
    for (int e : path_) {
      if (stamp_[e] == round) {
        res.fail("round " + std::to_string(round) + ": " + name(src_m) + " -> " + name(dst_m) + " and " +
                 name(user_[e].first) + " -> " + name(user_[e].second) + " share edge " + edge_name(e));
      }
      stamp_[e] = round;
      user_[e] = {src_m, dst_m};
    }
  }

 private:
  std::string name(int m) const { return t_.name(t_.machine_node(m)); }
  std::string edge_name(int e) const {
    const int child = e / 2 + 1, par = t_.parent(child);
    return e % 2 == 0 ? "(" + t_.name(child) + ", " + t_.name(par) + ")"
                      : "(" + t_.name(par) + ", " + t_.name(child) + ")";
  }
  const Topology& t_;
  std::vector<std::int64_t> stamp_;
  std::vector<std::pair<int, int>> user_;
  std::vector<int> path_;
};

// The O(1)-per-message check described at the top of the file.
class SegmentChecker {
 public:
  explicit SegmentChecker(const Topology& t) : tree_(t) {}

  // True when no two of the messages (machine pairs) share a directed link.
  bool round_is_free(const std::pair<int, int>* msgs, std::size_t k) {
    up_.clear();
    down_.clear();
    for (std::size_t i = 0; i < k; ++i) {
      const int ps = tree_.position(msgs[i].first);
      const int pd = tree_.position(msgs[i].second);
      if (ps == pd) continue;  // a local copy uses no link
      const int reach = tree_.common_depth_at(ps, pd) + 1;
      if (reach <= tree_.depth_at(ps)) up_.push_back({ps, reach});
      if (reach <= tree_.depth_at(pd)) down_.push_back({pd, reach});
    }
    return sort_by_position(up_) && segments_disjoint(up_) && sort_by_position(down_) &&
           segments_disjoint(down_);
  }

 private:
  struct Segment {
    int pos, reach;
    bool operator<(const Segment& o) const { return pos < o.pos; }
  };
  // An earlier segment still able to meet later ones: `meet` is depth(lca) of its bottom
  // and the current one's. From bottom to top of the stack, reach and meet both increase;
  // an entry with a larger reach and a smaller meet than another can never meet first.
  struct Open {
    int reach, meet;
  };

  // Sorts segs by bottom position: std::sort for small rounds (most rounds of deep trees
  // hold a few messages), a pass over all positions for large ones (a round of a one-switch
  // tree holds every machine). False when two segments start at the same machine (they
  // share its link).
  bool sort_by_position(std::vector<Segment>& segs) {
    const auto machines = static_cast<std::size_t>(tree_.num_machines());
    if (segs.size() <= 16 || segs.size() * 16 < machines) {
      std::sort(segs.begin(), segs.end());
      return true;
    }
    if (reach_at_.empty()) reach_at_.assign(machines, 0);
    for (const auto& sg : segs) {
      int& slot = reach_at_[static_cast<std::size_t>(sg.pos)];
      if (slot != 0) {
        for (const auto& c : segs) reach_at_[static_cast<std::size_t>(c.pos)] = 0;
        return false;
      }
      slot = sg.reach;  // >= 1: the reach is below the lca
    }
    std::size_t n = 0;
    for (std::size_t p = 0; p < reach_at_.size(); ++p)
      if (reach_at_[p] != 0) {
        segs[n++] = {static_cast<int>(p), reach_at_[p]};
        reach_at_[p] = 0;
      }
    return true;
  }

  // Segments sorted by bottom position; false when two share a node.
  bool segments_disjoint(const std::vector<Segment>& segs) {
    open_.clear();
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const auto& s = segs[i];
      if (i > 0) {
        if (segs[i - 1].pos == s.pos) return false;  // same bottom machine
        const int a = tree_.common_depth_at(segs[i - 1].pos, s.pos);
        // Every open entry now meets at most at depth a; those above a are clamped to a
        // and only the one with the smallest reach (the lowest of them) can stay useful.
        int lowest_reach = std::numeric_limits<int>::max();
        while (!open_.empty() && open_.back().meet > a) {
          lowest_reach = open_.back().reach;
          open_.pop_back();
        }
        if (lowest_reach <= a && (open_.empty() || open_.back().meet < a))
          open_.push_back({lowest_reach, a});
        if (!open_.empty() && open_.back().meet >= s.reach) return false;
      }
      // The new segment meets itself at its own depth; it replaces entries that reach
      // no higher than it does.
      while (!open_.empty() && open_.back().reach >= s.reach) open_.pop_back();
      open_.push_back({s.reach, tree_.depth_at(s.pos)});
    }
    return true;
  }

  detail::TreeIndex tree_;          // preorder positions, common-ancestor depths
  std::vector<Segment> up_, down_;  // the segments of one round on up- and down-links
  std::vector<int> reach_at_;       // sort_by_position's buckets, all 0 between calls
  std::vector<Open> open_;
};

// Mean number of links on the path of an AAPC message: every link carries its load in
// each direction. Up to a few links a message (one switch: 2), walking the paths costs
// less than sorting the rounds (4096 machines on one switch: 0.19 s against 0.34 s).
bool walking_is_cheaper(const Topology& t) {
  const double m = t.num_machines();
  double link_uses = 0;
  for (const auto& l : t.links()) link_uses += 2.0 * static_cast<double>(l.load());
  return link_uses <= 3.0 * m * (m - 1);
}

// One round at a time: the segment check, and a walk of the paths where it found
// contention (to name it) or where walking is the chosen method.
class RoundChecker {
 public:
  RoundChecker(const Topology& t, ContentionCheck how) : walk_(t) {
    if (how == ContentionCheck::Segments ||
        (how == ContentionCheck::Automatic && !walking_is_cheaper(t)))
      segments_.emplace(t);
  }

  void check(std::int64_t round, const std::pair<int, int>* msgs, std::size_t k,
             VerifyResult& res) {
    if (segments_ && segments_->round_is_free(msgs, k)) return;
    for (std::size_t i = 0; i < k; ++i) walk_.check(round, msgs[i].first, msgs[i].second, res);
    if (segments_) res.ok = false;  // the segment check found contention; the walk named it
  }

 private:
  std::optional<SegmentChecker> segments_;
  PathWalkingChecker walk_;
};

}  // namespace

VerifyResult verify_contention_free(const Schedule& s, const Topology& t, ContentionCheck how) {
  VerifyResult res;
  if (s.nprocs != t.num_machines()) {
    res.ok = false;
    res.problems.push_back("schedule has " + std::to_string(s.nprocs) + " ranks, topology " +
                           std::to_string(t.num_machines()) + " machines");
    return res;
  }
  RoundChecker check(t, how);
  std::vector<std::pair<int, int>> round;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    round.clear();
    for (const auto& tr : s.rounds[r].transfers) {
      if (tr.src < 0 || tr.src >= s.nprocs || tr.dst < 0 || tr.dst >= s.nprocs) {
        res.ok = false;
        res.problems.push_back("round " + std::to_string(r) + ": rank out of range");
        continue;
      }
      round.push_back({t.machine_of_rank()[tr.src], t.machine_of_rank()[tr.dst]});
    }
    check.check(static_cast<std::int64_t>(r), round.data(), round.size(), res);
  }
  return res;
}

VerifyResult verify_contention_free(const TreeAapcSchedule& s, const Topology& t,
                                    ContentionCheck how) {
  VerifyResult res;
  RoundChecker check(t, how);
  const auto ph = s.phases();
  for (std::int64_t p = 0; p < s.num_phases; ++p) {
    const auto begin = ph.offset[static_cast<std::size_t>(p)],
               end = ph.offset[static_cast<std::size_t>(p) + 1];
    check.check(p, ph.messages.data() + begin, static_cast<std::size_t>(end - begin), res);
  }
  return res;
}

}  // namespace libcomm
