// GtidSet: the one GTID set type of the project (library canal_parser, no
// MySQL client needed). Two servers, two meanings, one value:
//
//   MySQL   "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,uuid2:tag:1-3": every
//           transaction executed, by source uuid (and MySQL 8.4 tag), as
//           intervals of transaction numbers.
//   MariaDB "0-1-100,2-7-30": per replication domain the last GTID
//           (domain-server-sequence); a domain holds every sequence number
//           up to its last one.
//
// Parse reads either (the text tells which), ToString prints the canonical
// form (MySQL: uuids in lower case in the order first given, one uuid's
// intervals merged, its untagged ones before its tags; MariaDB: domains sorted), EncodeForDump/DecodeFromDump are the binary form of
// COM_BINLOG_DUMP_GTID and PREVIOUS_GTIDS (MySQL), and Contains/Subtract
// answer what the failover work asks: does the new primary hold everything
// the stream already delivered, and if not, which transactions are lost.
// Operations on sets of the two flavors are errors (or false), never guesses.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"

namespace canal::binlog {

class GtidSet {
 public:
  enum class Flavor : uint8_t { kEmpty, kMysql, kMariadb };

  // MySQL: the transactions of one source uuid (and tag), [start, end) intervals, sorted and merged.
  struct Source {
    std::array<uint8_t, 16> sid{};
    std::string tag;  // empty: untagged
    std::vector<GtidInterval> intervals;
  };
  // MariaDB: the last GTID of one domain.
  struct DomainGtid {
    uint32_t domain_id = 0;
    uint32_t server_id = 0;
    uint64_t seq_no = 0;
  };

  GtidSet() = default;

  // Empty text (or only spaces) is the empty set. Errors name the element
  // ("bad GTID set element 'x:1-': ...") and are InvalidArgument.
  static Status Parse(std::string_view text, GtidSet* out);
  // MySQL's binary form (COM_BINLOG_DUMP_GTID's data, PREVIOUS_GTIDS' untagged
  // body): 8-byte source count, then per source its 16-byte uuid, 8-byte
  // interval count and [start, end) pairs. Every count is checked against the
  // bytes before anything is allocated.
  static Status DecodeFromDump(std::string_view bytes, GtidSet* out);
  static GtidSet FromPreviousGtids(const PreviousGtidsEvent& event);

  std::string ToString() const;
  // ToString's text appended to *out (a caller's reused buffer: no allocation once it is big enough).
  void AppendTo(std::string* out) const;
  // MySQL only: the untagged form, or MySQL 8.4's tagged form when a source has a tag
  // (servers before 8.3 cannot read that one).
  Status EncodeForDump(std::string* out) const;
  // MySQL: how many transactions the set holds (0 for MariaDB positions).
  uint64_t TransactionCount() const;

  Flavor flavor() const { return flavor_; }
  bool empty() const { return flavor_ == Flavor::kEmpty; }
  const std::vector<Source>& sources() const { return sources_; }
  const std::vector<DomainGtid>& domains() const { return domains_; }

  // One transaction executed (MySQL), or the next GTID of a domain (MariaDB:
  // it becomes the domain's last). InvalidArgument on a flavor mismatch or a
  // gno outside [1, 2^63-1).
  Status AddMysql(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t gno);
  // Transactions first..last (inclusive) of one source (MySQL).
  Status AddMysqlRange(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t first, int64_t last);
  Status AddMariadb(uint32_t domain_id, uint32_t server_id, uint64_t seq_no);
  // Everything of `other` too (MySQL: union; MariaDB: per domain the later GTID).
  Status Add(const GtidSet& other);

  // Whether every transaction of `other` is in this set (MariaDB: every
  // domain of `other` is here with a sequence number at least as high; the
  // server id is not compared). The empty set is in every set; a set of
  // the other flavor is in none (unless empty).
  bool Contains(const GtidSet& other) const;
  // The transactions of this set that `other` lacks (MariaDB: the domains
  // where this set is ahead, with this set's last GTID; how far ahead is
  // ToString's business of the caller, `other`'s seq_no + 1 .. ours).
  // InvalidArgument on a flavor mismatch.
  Status Subtract(const GtidSet& other, GtidSet* out) const;

  // The same transactions (the order sources were given in aside).
  bool operator==(const GtidSet& other) const;

 private:
  Source* FindSource(const std::array<uint8_t, 16>& sid, std::string_view tag);
  const Source* FindSource(const std::array<uint8_t, 16>& sid, std::string_view tag) const;
  void Normalize();

  Flavor flavor_ = Flavor::kEmpty;
  std::vector<Source> sources_;      // kMysql: by uuid as first given, then tag
  std::vector<DomainGtid> domains_;  // kMariadb: sorted by domain
};


}  // namespace canal::binlog
