#include "oa/metric_cover.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace oaprof::oa {
namespace {

constexpr std::size_t kSuggestions = 3;

// The requested names once each, in request order: a name typed twice is still one counter.
std::vector<std::string> distinct_names(std::span<const std::string> names) {
  if (names.empty()) {
    throw std::invalid_argument(
        "--metrics: no counter names given; name at least one, e.g. --metrics EuActive");
  }
  std::vector<std::string> distinct;
  std::unordered_set<std::string_view> seen;
  for (const std::string& name : names) {
    if (name.empty()) {
      throw std::invalid_argument(
          "--metrics: an empty counter name (two commas in a row, or one at an end?); separate "
          "names with single commas");
    }
    if (seen.insert(name).second) distinct.push_back(name);
  }
  return distinct;
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Levenshtein distance, one row at a time.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // row[i-1][j-1]
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Every counter symbol of `sets`, once, in the order of the file, so that suggestions tied on
// distance come out the same on every run.
std::vector<std::string_view> known_symbols(std::span<const MetricSet> sets) {
  std::vector<std::string_view> symbols;
  std::unordered_set<std::string_view> seen;
  for (const MetricSet& set : sets) {
    for (const MetricCounter& counter : set.counters()) {
      if (seen.insert(counter.symbol).second) symbols.push_back(counter.symbol);
    }
  }
  return symbols;
}

// Up to kSuggestions symbols nearest to `name` ignoring case (a user typing "euactive" means
// "EuActive"), nearest first, ties in file order.
std::vector<std::string_view> closest_symbols(std::span<const std::string_view> known,
                                              std::string_view name) {
  const std::string lower_name = lowercase(name);
  std::vector<std::pair<std::size_t, std::size_t>> ranked;  // (distance, index in known)
  for (std::size_t i = 0; i < known.size(); ++i) {
    ranked.emplace_back(edit_distance(lower_name, lowercase(known[i])), i);
  }
  const std::size_t count = std::min(kSuggestions, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(count),
                    ranked.end());
  std::vector<std::string_view> closest;
  for (std::size_t i = 0; i < count; ++i) closest.push_back(known[ranked[i].second]);
  return closest;
}

bool has_counter(const MetricSet& set, std::string_view name) {
  return set.counter_index(name).has_value();
}

// One error for all unknown names, so that a user fixes the whole list in one go.
void throw_if_unknown(std::span<const MetricSet> sets, std::span<const std::string> names) {
  const std::vector<std::string_view> known = known_symbols(sets);
  std::vector<std::string> problems;
  for (const std::string& name : names) {
    const bool found = std::any_of(sets.begin(), sets.end(),
                                   [&](const MetricSet& set) { return has_counter(set, name); });
    if (found) continue;
    const std::vector<std::string_view> closest = closest_symbols(known, name);
    problems.push_back(closest.empty() ? fmt::format("no metric set has {}", name)
                                       : fmt::format("no metric set has {} (closest: {})", name,
                                                     fmt::join(closest, ", ")));
  }
  if (problems.empty()) return;
  throw std::invalid_argument(fmt::format(
      "--metrics: {}; counter names are the symbol names of IGT's metric files, matched exactly, "
      "case included",
      fmt::join(problems, "; ")));
}

// Bit i is set when a set has names[i]; more than 64 names take more than one word.
using NameMask = std::vector<std::uint64_t>;

NameMask empty_mask(std::size_t name_count) { return NameMask((name_count + 63) / 64, 0); }

void set_bit(NameMask& mask, std::size_t i) { mask[i / 64] |= std::uint64_t{1} << (i % 64); }

void add_to(NameMask& into, const NameMask& mask) {
  for (std::size_t w = 0; w < into.size(); ++w) into[w] |= mask[w];
}

int count_names(const NameMask& mask) {
  int count = 0;
  for (std::uint64_t word : mask) count += std::popcount(word);
  return count;
}

// How many of `mask`'s names `covered` does not have yet.
int count_new(const NameMask& mask, const NameMask& covered) {
  int count = 0;
  for (std::size_t w = 0; w < mask.size(); ++w) count += std::popcount(mask[w] & ~covered[w]);
  return count;
}

// A set that has at least one requested name, by its position in the input.
struct Candidate {
  std::size_t set_index;
  NameMask names;
};

// Only sets that give something can be in a smallest cover (dropping one that gives nothing
// leaves a smaller cover), so the search skips the rest; input order is kept for the tie rule.
std::vector<Candidate> candidates_for(std::span<const MetricSet> sets,
                                      std::span<const std::string> names) {
  std::vector<Candidate> candidates;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    NameMask mask = empty_mask(names.size());
    bool any = false;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!has_counter(sets[s], names[i])) continue;
      set_bit(mask, i);
      any = true;
    }
    if (any) candidates.push_back({s, std::move(mask)});
  }
  return candidates;
}

// Steps `positions` (strictly increasing, below `n`) to the next combination in lexicographic
// order; false after the last.
bool next_combination(std::vector<std::size_t>& positions, std::size_t n) {
  const std::size_t k = positions.size();
  for (std::size_t i = k; i-- > 0;) {
    if (positions[i] < n - k + i) {
      ++positions[i];
      for (std::size_t j = i + 1; j < k; ++j) positions[j] = positions[j - 1] + 1;
      return true;
    }
  }
  return false;
}

// The first combination of `size` candidates, in lexicographic order of their positions (so the
// one whose sets come first in the input), that covers every name; empty when none does.
std::vector<std::size_t> first_cover_of_size(const std::vector<Candidate>& candidates,
                                             std::size_t size, std::size_t name_count) {
  if (size > candidates.size()) return {};
  std::vector<std::size_t> positions(size);
  std::iota(positions.begin(), positions.end(), std::size_t{0});
  do {
    NameMask covered = empty_mask(name_count);
    for (std::size_t p : positions) add_to(covered, candidates[p].names);
    if (count_names(covered) == static_cast<int>(name_count)) return positions;
  } while (next_combination(positions, candidates.size()));
  return {};
}

// Greedy set cover: the candidate giving most of the names still missing, the earlier on a tie,
// until none is missing. Used only where no cover of kMaxExactCoverSize sets exists: it costs
// candidates × picks mask counts instead of C(candidates, k) combinations, and is known to use
// at most ln(names) + 1 times the optimum number of sets, not always the optimum itself.
std::vector<std::size_t> greedy_cover(const std::vector<Candidate>& candidates,
                                      std::size_t name_count) {
  NameMask covered = empty_mask(name_count);
  std::vector<std::size_t> picked;
  for (std::size_t missing = name_count; missing > 0;) {
    std::size_t best = 0;
    int best_new = 0;
    for (std::size_t p = 0; p < candidates.size(); ++p) {
      const int gives = count_new(candidates[p].names, covered);
      if (gives > best_new) {
        best = p;
        best_new = gives;
      }
    }
    // Every name is in some candidate (throw_if_unknown), so a pick always gives at least one.
    add_to(covered, candidates[best].names);
    picked.push_back(best);
    missing -= static_cast<std::size_t>(best_new);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

std::vector<std::size_t> smallest_cover(const std::vector<Candidate>& candidates,
                                        std::size_t name_count) {
  for (std::size_t size = 1; size <= static_cast<std::size_t>(kMaxExactCoverSize); ++size) {
    std::vector<std::size_t> cover = first_cover_of_size(candidates, size, name_count);
    if (!cover.empty()) return cover;
  }
  return greedy_cover(candidates, name_count);
}

}  // namespace

MetricCover choose_metric_sets(std::span<const MetricSet> sets,
                               std::span<const std::string> names) {
  const std::vector<std::string> distinct = distinct_names(names);
  throw_if_unknown(sets, distinct);
  const std::vector<Candidate> candidates = candidates_for(sets, distinct);

  MetricCover cover;
  // Positions come sorted, and candidates keep input order, so the sets do too.
  for (std::size_t p : smallest_cover(candidates, distinct.size())) {
    cover.sets.push_back(&sets[candidates[p].set_index]);
  }
  for (const std::string& name : distinct) {
    const auto giver = std::find_if(cover.sets.begin(), cover.sets.end(),
                                    [&](const MetricSet* set) { return has_counter(*set, name); });
    cover.given_by.emplace_back(name, (*giver)->symbol());
  }
  return cover;
}

}  // namespace oaprof::oa
