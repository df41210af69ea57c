#include "straggler/relay_matching.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {
namespace {

// The minimum-cost assignment of every row to a distinct column (rows <= columns), by the
// Hungarian method with potentials. cost[i][j]; returns the column of each row.
std::vector<int> AssignRows(const std::vector<std::vector<double>>& cost, int columns) {
  const int rows = static_cast<int>(cost.size());
  const double inf = std::numeric_limits<double>::infinity();
  // 1-based, column 0 the virtual start of each augmenting path.
  std::vector<double> row_potential(rows + 1, 0), column_potential(columns + 1, 0);
  std::vector<int> row_of(columns + 1, 0), previous(columns + 1, 0);
  for (int r = 1; r <= rows; ++r) {
    row_of[0] = r;
    int column = 0;
    std::vector<double> slack(columns + 1, inf);
    std::vector<bool> used(columns + 1, false);
    do {
      used[column] = true;
      const int row = row_of[column];
      double delta = inf;
      int next = 0;
      for (int j = 1; j <= columns; ++j) {
        if (used[j]) continue;
        const double reduced = cost[row - 1][j - 1] - row_potential[row] - column_potential[j];
        if (reduced < slack[j]) {
          slack[j] = reduced;
          previous[j] = column;
        }
        if (slack[j] < delta) {
          delta = slack[j];
          next = j;
        }
      }
      for (int j = 0; j <= columns; ++j) {
        if (used[j]) {
          row_potential[row_of[j]] += delta;
          column_potential[j] -= delta;
        } else {
          slack[j] -= delta;
        }
      }
      column = next;
    } while (row_of[column] != 0);
    do {  // flip the augmenting path
      const int before = previous[column];
      row_of[column] = row_of[before];
      column = before;
    } while (column != 0);
  }
  std::vector<int> column_of(rows, -1);
  for (int j = 1; j <= columns; ++j) {
    if (row_of[j] != 0) column_of[row_of[j] - 1] = j - 1;
  }
  return column_of;
}

}  // namespace

std::vector<RelayPair> MatchRelays(const std::vector<int>& stragglers,
                                   const std::vector<int>& partners,
                                   const std::function<double(int, int)>& weight, int per_partner) {
  if (per_partner < 1) {
    throw std::invalid_argument("a partner relays for at least 1 straggler, not " +
                                std::to_string(per_partner));
  }
  const std::set<int> straggling(stragglers.begin(), stragglers.end());
  for (int p : partners) {
    if (straggling.count(p) != 0) {
      throw std::invalid_argument("worker " + std::to_string(p) +
                                  " is both a straggler and a relay partner");
    }
  }
  if (stragglers.empty() || partners.empty()) return {};
  // Columns: each partner's slots, then one column per straggler worth nothing (unmatched).
  const int slots = static_cast<int>(partners.size()) * per_partner;
  const int columns = slots + static_cast<int>(stragglers.size());
  std::vector<std::vector<double>> cost(stragglers.size(), std::vector<double>(columns, 0));
  std::vector<std::vector<double>> worth(stragglers.size(), std::vector<double>(partners.size()));
  for (size_t s = 0; s < stragglers.size(); ++s) {
    for (size_t p = 0; p < partners.size(); ++p) {
      worth[s][p] = std::max(0.0, weight(stragglers[s], partners[p]));
      for (int k = 0; k < per_partner; ++k) cost[s][p * per_partner + k] = -worth[s][p];
    }
  }
  const std::vector<int> column_of = AssignRows(cost, columns);
  std::vector<RelayPair> pairs;
  for (size_t s = 0; s < stragglers.size(); ++s) {
    const int column = column_of[s];
    if (column < 0 || column >= slots) continue;
    const int p = column / per_partner;
    if (worth[s][p] > 0) pairs.push_back({stragglers[s], partners[p], worth[s][p]});
  }
  return pairs;
}

}  // namespace straggler
}  // namespace pacer
