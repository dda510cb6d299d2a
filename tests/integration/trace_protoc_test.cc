// oaprof --trace end to end: a run on the simulated GPU writes a CSV and a Perfetto trace; Debian's
// protoc (protobuf-compiler) decodes the trace without a schema (--decode_raw), and the packets are
// checked field by field against the CSV rows: structure and values, not bytes. Skipped, saying
// why, where protoc is not installed (scripts/setup installs it, so CI runs it).
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::read_csv;
using oaprof::testing::run;

// protoc --decode_raw's text: "N: value" for a scalar, "N { ... }" for a nested message.
struct Node {
 public:
  int number = 0;
  std::string value;  // as printed: 123, 0x3ff0000000000000, "text"
  std::vector<Node> children;
  bool braced = false;  // printed as `N {`: a message or a group
  const Node* child(int n) const {
    for (const auto& c : children)
      if (c.number == n) return &c;
    return nullptr;
  }
  std::vector<const Node*> all(int n) const {
    std::vector<const Node*> out;
    for (const auto& c : children)
      if (c.number == n) out.push_back(&c);
    return out;
  }
  std::uint64_t u() const { return std::stoull(value, nullptr, 0); }
  double d() const { return std::bit_cast<double>(u()); }  // fixed64 prints as hex bits
  // A length-delimited field's bytes. protoc prints a string whose bytes happen to parse as a
  // message ("add_vect4" does: 'a' is field 12, fixed64) as that message, so a nested node is
  // encoded back into its bytes.
  std::string s() const {
    if (!children.empty() || value.empty()) return encode_children();
    std::string out;  // a quoted string with C escapes: \n \" \\ \' and octal \ooo
    for (std::size_t i = 1; i + 1 < value.size(); ++i) {
      if (value[i] != '\\') {
        out += value[i];
      } else if (value[i + 1] >= '0' && value[i + 1] <= '7') {
        out += static_cast<char>(std::stoi(value.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        const char c = value[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
      }
    }
    return out;
  }

 private:
  static void varint(std::string& out, std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
    out += static_cast<char>(v);
  }
  std::string encode_children() const {
    std::string out;
    for (const Node& c : children) {
      const auto key = static_cast<std::uint64_t>(c.number) << 3;
      if (c.braced && c.children.empty()) {
        // An empty `N { }`: protoc prints an empty message as `N: ""`, so this is a group, a
        // start and an end tag ("host" reads as field 13 = 111, then group 14).
        varint(out, key | 3);
        varint(out, key | 4);
      } else if (!c.children.empty() || c.value.starts_with('"')) {
        const std::string b = c.s();
        varint(out, key | 2);
        varint(out, b.size());
        out += b;
      } else if (c.value.starts_with("0x")) {  // fixed64 (16 hex digits) or fixed32 (8)
        const int n = c.value.size() == 18 ? 8 : 4;
        varint(out, key | (n == 8 ? 1 : 5));
        for (int i = 0; i < n; ++i) out += static_cast<char>((c.u() >> (8 * i)) & 0xff);
      } else {
        varint(out, key);
        varint(out, c.u());
      }
    }
    return out;
  }
};

Node parse_decode_raw(const std::string& text) {
  Node root;
  std::vector<Node*> stack{&root};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line == "}") {
      stack.pop_back();
      continue;
    }
    Node n;
    n.number = std::stoi(line);
    if (line.ends_with(" {")) {
      n.braced = true;
      stack.back()->children.push_back(n);
      stack.push_back(&stack.back()->children.back());
    } else {
      n.value = line.substr(line.find(": ") + 2);
      stack.back()->children.push_back(n);
    }
  }
  return root;
}

TEST(TraceProtocTest, PacketsMatchTheCsvFieldByField) {
  if (run("command -v protoc >/dev/null").status != 0) {
    GTEST_SKIP() << "protoc is not installed (Debian package protobuf-compiler; scripts/setup "
                    "installs it): the trace is not decoded here";
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("oaprof-trace-{}", ::getpid());
  fs::create_directories(dir);
  const auto r = run(fmt::format(
      "{} --device sim --format 101 -q -o {} --trace {} -- {} mad_scalar "
      "add_vect4 --min-time 0 --max-repeats 3 --wg 2 --wi 8",
      OAPROF_BIN, (dir / "run.csv").string(), (dir / "run.pftrace").string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto csv = read_csv(dir / "run.csv");
  const auto decoded = run(fmt::format("protoc --decode_raw < {}", (dir / "run.pftrace").string()));
  ASSERT_EQ(decoded.status, 0) << decoded.output;
  const Node trace = parse_decode_raw(decoded.output);
  fs::remove_all(dir);
  ASSERT_GE(csv.size(), 2u);

  // Trace.packet = 1; TracePacket: clock_snapshot 6, timestamp 8, sequence id 10, track_event 11,
  // timestamp_clock_id 58, track_descriptor 60 (src/report/perfetto_fields.h).
  const auto packets = trace.all(1);
  ASSERT_FALSE(packets.empty());
  ASSERT_NE(packets[0]->child(6), nullptr) << "the clock snapshot comes first";
  std::map<std::uint64_t, const Node*> tracks;  // uuid -> TrackDescriptor
  std::vector<const Node*> begins, ends;
  std::map<std::string, std::vector<double>> counters;  // track name -> values
  for (const Node* p : packets) {
    ASSERT_EQ(p->child(10)->u(), 1u) << "one sequence";
    if (const Node* t = p->child(60)) tracks[t->child(1)->u()] = t;
    const Node* e = p->child(11);
    if (!e) continue;
    EXPECT_EQ(p->child(58)->u(), 3u) << "CLOCK_MONOTONIC";
    const std::uint64_t type = e->child(9)->u();
    if (type == 1) begins.push_back(p);
    if (type == 2) ends.push_back(p);
    if (type == 4) {
      const Node* track = tracks.at(e->child(11)->u());  // described before use
      counters[track->child(2)->s()].push_back(e->child(44)->d());
    }
  }
  ASSERT_EQ(begins.size(), csv.size());
  ASSERT_EQ(ends.size(), csv.size());

  std::set<std::string> kernels;
  for (std::size_t i = 0; i < csv.size(); ++i) {
    const auto& row = csv[i];
    const Node* e = begins[i]->child(11);
    EXPECT_EQ(e->child(23)->s(), row.at("kernel"));
    kernels.insert(e->child(23)->s());
    // The slice lasts the launch's OpenCL kernel time, on the queue's track, which belongs to the
    // launching process and names the queue of the row.
    const Node* end = ends[i];
    EXPECT_EQ(end->child(8)->u() - begins[i]->child(8)->u(), std::stoull(row.at("kernel_ns")));
    const Node* queue_track = tracks.at(e->child(11)->u());
    EXPECT_EQ(queue_track->child(2)->s(), "OpenCL queue " + row.at("queue"));
    const Node* process = tracks.at(queue_track->child(5)->u())->child(3);
    ASSERT_NE(process, nullptr);
    EXPECT_EQ(std::to_string(process->child(1)->u()), row.at("pid"));

    // Every annotation (DebugAnnotation: name 10; uint 3, double 5, string 6) is the CSV cell of
    // the same name; an empty cell has none.
    std::set<std::string> seen;
    for (const Node* a : e->all(4)) {
      const std::string name = a->child(10)->s();
      seen.insert(name);
      ASSERT_TRUE(row.count(name)) << name;
      const std::string& cell = row.at(name);
      if (const Node* u = a->child(3)) {
        EXPECT_EQ(std::to_string(u->u()), cell) << name;
      } else if (const Node* d = a->child(5)) {
        const auto dot = cell.find('.');
        const int decimals = dot == std::string::npos ? 0 : static_cast<int>(cell.size() - dot - 1);
        EXPECT_EQ(fmt::format("{:.{}f}", d->d(), decimals), cell) << name;
      } else {
        EXPECT_EQ(a->child(6)->s(), cell) << name;
      }
    }
    for (const auto& [name, cell] : row) {
      const bool run_wide = name == "host" || name == "rank";  // not repeated on every slice
      EXPECT_EQ(seen.count(name), cell.empty() || run_wide ? 0u : 1u) << name;
    }
  }
  EXPECT_EQ(kernels, (std::set<std::string>{"mad_scalar", "add_vect4"}));

  // Counter tracks: the frequency per launch, as the CSV has it, and the metric set's figures.
  ASSERT_EQ(counters["avg_freq_mhz"].size(), csv.size());
  for (std::size_t i = 0; i < csv.size(); ++i) {
    EXPECT_EQ(fmt::format("{:.1f}", counters["avg_freq_mhz"][i]), csv[i].at("avg_freq_mhz"));
  }
  EXPECT_EQ(counters["GpuBusy_percent"].size(), csv.size());
  EXPECT_EQ(counters["EuActive_percent"].size(), csv.size());

  // The launching thread is named (ThreadDescriptor: pid 1, tid 2, thread_name 5).
  bool named = false;
  for (const auto& [uuid, t] : tracks) {
    if (const Node* th = t->child(4)) {
      EXPECT_EQ(std::to_string(th->child(2)->u()), csv[0].at("tid"));
      named = th->child(5) != nullptr && !th->child(5)->s().empty();
    }
  }
  EXPECT_TRUE(named);
}

}  // namespace
