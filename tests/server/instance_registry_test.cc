// InstanceRegistry with a fake instance factory (no database): which
// destinations start (canal.destinations or auto scan), and what each scan
// does — a new folder starts its instance, a removed one stops it, an edited
// instance.properties restarts that instance alone, and a bad file is logged
// and retried when it changes without stopping the others. Also one real
// Instance against a closed port: it starts, serves its Destination calls and
// stops promptly.
#include "canal/server/instance_registry.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "canal/meta/memory_meta_manager.h"
#include "canal/server/instance.h"
#include "canal/store/ring_store.h"

namespace canal::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Records its life; holds the config it was made from.
class FakeDestination final : public ManagedDestination {
 public:
  FakeDestination(InstanceConfig config, std::atomic<int>* live) : config_(std::move(config)), live_(live) {}
  ~FakeDestination() override { Stop(); }
  Status Start() override {
    if (config_.parser.master.user == "refuse-start") return Status::IOError("cannot start (test)");
    running_ = true;
    ++*live_;
    return Status::OK();
  }
  void Stop() override {
    if (running_.exchange(false)) --*live_;
  }
  const std::string& name() const override { return config_.destination; }
  bool running() const override { return running_; }
  bool Halted() const override { return halted_; }
  void Halt() { halted_ = true; }  // as an Instance whose parser failed
  std::shared_ptr<store::RingStore> store() override { return nullptr; }
  meta::MetaManager* meta() override { return nullptr; }
  Status SetClientFilter(std::string_view) override { return Status::OK(); }
  const InstanceConfig& config() const { return config_; }

 private:
  InstanceConfig config_;
  std::atomic<int>* live_;
  std::atomic<bool> running_{false};
  std::atomic<bool> halted_{false};
};

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("canal_registry_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "conf");
    log_stream_ = std::make_shared<std::ostringstream>();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_);
    logger_ = std::make_shared<spdlog::logger>("registry-test", sink);
  }
  void TearDown() override {
    registry_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void WriteCanal(const std::string& text) { Write(root_ / "conf" / "canal.properties", text); }
  void WriteInstance(const std::string& dest, const std::string& user = "canal", const std::string& extra = "") {
    Write(root_ / "conf" / dest / "instance.properties",
          "canal.instance.master.address=127.0.0.1:3306\ncanal.instance.dbUsername=" + user + "\n" + extra);
  }
  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }

  // Loads canal.properties and makes (not starts) the registry.
  void MakeRegistry(std::chrono::milliseconds scan = 0ms) {
    CanalConfig canal;
    Status s = LoadCanalConfig((root_ / "conf" / "canal.properties").string(), {}, &canal,
                               [](const std::string&) { return std::optional<std::string>(); });
    ASSERT_TRUE(s.ok()) << s.ToString();
    RegistryOptions options;
    options.logger = logger_;
    options.scan_interval = scan;
    options.factory = [this](const InstanceConfig& config, std::shared_ptr<ManagedDestination>* out) {
      std::lock_guard<std::mutex> lock(mu_);
      ++made_[config.destination];
      *out = std::make_shared<FakeDestination>(config, &live_);
      return Status::OK();
    };
    registry_ = std::make_unique<InstanceRegistry>(canal, std::move(options));
  }

  int Made(const std::string& dest) {
    std::lock_guard<std::mutex> lock(mu_);
    return made_[dest];
  }
  std::string User(const std::string& dest) {
    auto d = std::dynamic_pointer_cast<FakeDestination>(registry_->Find(dest));
    return d ? d->config().parser.master.user : "<not running>";
  }
  std::string Log() {
    logger_->flush();
    return log_stream_->str();
  }

  fs::path root_;
  static inline int counter_ = 0;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<InstanceRegistry> registry_;
  std::mutex mu_;
  std::map<std::string, int> made_;
  std::atomic<int> live_{0};
};

TEST_F(RegistryTest, WithoutAutoScanStartsExactlyTheListedDestinations) {
  WriteCanal("canal.auto.scan=false\ncanal.destinations=a,b\n");
  WriteInstance("a");
  WriteInstance("b");
  WriteInstance("unlisted");
  MakeRegistry();
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"a", "b"}));
  ASSERT_NE(registry_->Find("a"), nullptr);
  EXPECT_EQ(registry_->Find("a")->name(), "a");
  EXPECT_EQ(registry_->Find("unlisted"), nullptr);
  EXPECT_EQ(registry_->Find(""), nullptr);
  EXPECT_EQ(live_.load(), 2);

  // No scanning without auto scan: a new folder changes nothing.
  WriteInstance("c");
  registry_->ScanNow();
  EXPECT_EQ(registry_->Find("c"), nullptr);
  registry_->Stop();
  EXPECT_EQ(live_.load(), 0);
  EXPECT_EQ(registry_->Find("a"), nullptr);
}

TEST_F(RegistryTest, AListedDestinationWithoutItsFileFailsAloneAndIsNamed) {
  WriteCanal("canal.auto.scan=false\ncanal.destinations=a,missing\n");
  WriteInstance("a");
  MakeRegistry();
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(failures[0].IsNotFound()) << failures[0].ToString();
  EXPECT_NE(failures[0].message().find((root_ / "conf" / "missing" / "instance.properties").string()),
            std::string::npos);
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"a"}));
  EXPECT_NE(Log().find("destination missing not started"), std::string::npos) << Log();
}

TEST_F(RegistryTest, AutoScanStartsEveryFolderHoldingInstanceProperties) {
  WriteCanal("canal.auto.scan=true\ncanal.destinations=example\n");
  WriteInstance("one");
  WriteInstance("two");
  fs::create_directories(root_ / "conf" / "spring");  // a folder without instance.properties
  Write(root_ / "conf" / "stray.properties", "x=1\n");
  MakeRegistry(1h);  // the test scans by hand
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"one", "two"}));
  // canal.destinations names a destination with no folder: logged.
  EXPECT_NE(Log().find("canal.destinations lists example"), std::string::npos) << Log();
}

TEST_F(RegistryTest, AScanStartsNewStopsRemovedAndRestartsOnlyTheEditedInstance) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("keep");
  WriteInstance("edit", "before");
  WriteInstance("gone");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  EXPECT_EQ(live_.load(), 3);
  auto keep_before = registry_->Find("keep");

  WriteInstance("new");
  WriteInstance("edit", "after");
  fs::remove_all(root_ / "conf" / "gone");
  registry_->ScanNow();

  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"edit", "keep", "new"}));
  EXPECT_EQ(registry_->Find("gone"), nullptr);
  EXPECT_EQ(User("edit"), "after");
  EXPECT_EQ(Made("edit"), 2);
  EXPECT_EQ(Made("keep"), 1);  // untouched
  EXPECT_EQ(registry_->Find("keep"), keep_before);
  EXPECT_TRUE(keep_before->running());
  EXPECT_EQ(live_.load(), 3);
  // What a client subscribed to them is told (no ZooKeeper here).
  EXPECT_FALSE(registry_->Arbitrated());
  EXPECT_EQ(registry_->WhyNotServed("edit"), "instance.properties changed");
  EXPECT_EQ(registry_->WhyNotServed("gone"), "its instance.properties is gone");
  EXPECT_EQ(registry_->WhyNotServed("keep"), "");

  // A scan with nothing changed does nothing.
  registry_->ScanNow();
  EXPECT_EQ(Made("edit"), 2);
  EXPECT_EQ(Made("new"), 1);
}

TEST_F(RegistryTest, RemovingOnlyInstancePropertiesStopsTheInstance) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("a");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  auto a = registry_->Find("a");
  ASSERT_NE(a, nullptr);
  fs::remove(root_ / "conf" / "a" / "instance.properties");
  registry_->ScanNow();
  EXPECT_EQ(registry_->Find("a"), nullptr);
  EXPECT_FALSE(a->running());  // a session still holding it sees it stopped
}

TEST_F(RegistryTest, ABadFileIsLoggedOnceRetriedWhenEditedAndStopsNoOther) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("good");
  WriteInstance("bad", "canal", "canal.instance.memory.buffer.size=1000\n");
  MakeRegistry(1h);
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].message().find("canal.instance.memory.buffer.size = '1000'"), std::string::npos)
      << failures[0].ToString();
  EXPECT_NE(failures[0].message().find((root_ / "conf" / "bad" / "instance.properties").string()),
            std::string::npos);
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"good"}));

  // The same bad text is not reported at every scan.
  registry_->ScanNow();
  registry_->ScanNow();
  std::string log = Log();
  size_t count = 0;
  for (size_t p = log.find("destination bad not started"); p != std::string::npos;
       p = log.find("destination bad not started", p + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << log;

  // Fixed: it starts; the good one was never restarted.
  WriteInstance("bad");
  registry_->ScanNow();
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"bad", "good"}));
  EXPECT_EQ(Made("good"), 1);

  // Broken again by an edit: the running instance stops, the other runs on.
  WriteInstance("bad", "canal", "canal.instance.filter.regex=(\n");
  registry_->ScanNow();
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"good"}));
  EXPECT_EQ(live_.load(), 1);
}

TEST_F(RegistryTest, AnInstanceThatFailsToStartIsReportedAndLeftOut) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("ok");
  WriteInstance("refuses", "refuse-start");
  MakeRegistry(1h);
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].message().find("refuses"), std::string::npos) << failures[0].ToString();
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"ok"}));
}

TEST_F(RegistryTest, TheScanThreadPicksUpChangesOnItsOwn) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("first");
  MakeRegistry(50ms);
  ASSERT_TRUE(registry_->Start().ok());
  WriteInstance("second");
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (registry_->Find("second") == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(registry_->Find("second"), nullptr);
  registry_->Stop();  // joins the scan thread promptly
  EXPECT_EQ(live_.load(), 0);
}

TEST_F(RegistryTest, NoDestinationAtAllIsLoggedNotFatal) {
  WriteCanal("canal.auto.scan=true\n");
  MakeRegistry(1h);
  std::vector<Status> failures;
  ASSERT_TRUE(registry_->Start(&failures).ok());
  EXPECT_TRUE(failures.empty());
  EXPECT_TRUE(registry_->Running().empty());
  EXPECT_NE(Log().find("no destination to run"), std::string::npos);
}

// A real Instance whose primary does not answer: it starts (the parser
// retries in the background), serves the Destination calls, and stops fast.
// `touch`: a later modification time, the text unchanged.
void Touch(const fs::path& file) {
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(2));
}

TEST_F(RegistryTest, ATouchRestartsAHaltedDestinationAndLeavesARunningOneAlone) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("halted");
  WriteInstance("fine");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  auto halted = std::dynamic_pointer_cast<FakeDestination>(registry_->Find("halted"));
  ASSERT_NE(halted, nullptr);
  halted->Halt();

  // Untouched: a halted destination stays as it is.
  registry_->ScanNow();
  EXPECT_EQ(Made("halted"), 1);

  Touch(root_ / "conf" / "halted" / "instance.properties");
  Touch(root_ / "conf" / "fine" / "instance.properties");
  registry_->ScanNow();
  EXPECT_EQ(Made("halted"), 2);
  EXPECT_NE(registry_->Find("halted"), halted);
  EXPECT_FALSE(halted->running());
  EXPECT_EQ(Made("fine"), 1);  // running: a touch is not a reason to restart
  EXPECT_NE(Log().find("destination halted: instance.properties touched; starting it again"), std::string::npos)
      << Log();
  // Once: the next scan sees the same time.
  registry_->ScanNow();
  EXPECT_EQ(Made("halted"), 2);
}

TEST_F(RegistryTest, ATouchRetriesADestinationThatFailedToStart) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("a", "refuse-start");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  EXPECT_EQ(Made("a"), 1);
  EXPECT_EQ(registry_->Find("a"), nullptr);
  registry_->ScanNow();
  EXPECT_EQ(Made("a"), 1);  // same text, same time: not retried
  Touch(root_ / "conf" / "a" / "instance.properties");
  registry_->ScanNow();
  EXPECT_EQ(Made("a"), 2);  // tried again (and refused again, by the fake)
}

TEST_F(RegistryTest, AScanOutOfFileDescriptorsStopsNothing) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("a");
  WriteInstance("b");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  ASSERT_EQ(live_.load(), 2);

  // No descriptor left: the conf folder cannot even be opened.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = 0;  // no new descriptor at all, whatever the lowest free number
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  registry_->ScanNow();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);

  EXPECT_EQ(live_.load(), 2) << Log();
  EXPECT_EQ(registry_->Running(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Log().find("is gone"), std::string::npos) << Log();
  EXPECT_NE(Log().find("every destination is left as it is until a scan succeeds"), std::string::npos) << Log();
  // Descriptors back: the next scan sees both, unchanged.
  registry_->ScanNow();
  EXPECT_EQ(Made("a"), 1);
  EXPECT_EQ(Made("b"), 1);
}

// The admin API's stop/start/restart (InstanceRegistry::Control): a stop
// holds the destination down across scans, even an edit; a start reads the
// file as it is now; unknown names are NotFound; a failed start is Held().
TEST_F(RegistryTest, OperatorStopHoldsAcrossScansAndStartAppliesTheFileAsItIsNow) {
  WriteCanal("canal.auto.scan=true\n");
  WriteInstance("one", "before");
  WriteInstance("two");
  MakeRegistry(1h);
  ASSERT_TRUE(registry_->Start().ok());
  std::string done;
  EXPECT_TRUE(registry_->Control("nope", OperatorAction::kStop, &done).IsNotFound());

  ASSERT_TRUE(registry_->Control("one", OperatorAction::kStop, &done).ok());
  EXPECT_EQ(done, "stopped");
  EXPECT_EQ(registry_->Find("one"), nullptr);
  EXPECT_TRUE(registry_->Held("one").stopped_by_operator);
  EXPECT_EQ(registry_->WhyNotServed("one"), "stopped by an operator (admin API)");
  EXPECT_EQ(live_.load(), 1);
  ASSERT_TRUE(registry_->Control("one", OperatorAction::kStop, &done).ok());
  EXPECT_EQ(done, "already stopped");

  // Neither a scan nor an edit starts it again.
  WriteInstance("one", "after");
  registry_->ScanNow();
  EXPECT_EQ(registry_->Find("one"), nullptr);
  EXPECT_EQ(Made("one"), 1);

  ASSERT_TRUE(registry_->Control("one", OperatorAction::kStart, &done).ok());
  EXPECT_EQ(done, "started");
  EXPECT_EQ(User("one"), "after");
  EXPECT_FALSE(registry_->Held("one").stopped_by_operator);
  ASSERT_TRUE(registry_->Control("one", OperatorAction::kStart, &done).ok());
  EXPECT_EQ(done, "already running");
  registry_->ScanNow();  // the file it started from: nothing to do
  EXPECT_EQ(Made("one"), 2);

  ASSERT_TRUE(registry_->Control("two", OperatorAction::kRestart, &done).ok());
  EXPECT_EQ(done, "restarted");
  EXPECT_EQ(Made("two"), 2);
  EXPECT_EQ(live_.load(), 2);

  // A start that fails leaves it down, its error kept for the view.
  WriteInstance("two", "refuse-start");
  Status s = registry_->Control("two", OperatorAction::kRestart, &done);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(registry_->Find("two"), nullptr);
  EXPECT_NE(registry_->Held("two").failure.find("cannot start (test)"), std::string::npos)
      << registry_->Held("two").failure;
  EXPECT_NE(Log().find("destination one: stopped by an operator (admin API); stopping it"), std::string::npos) << Log();
}

}  // namespace
}  // namespace canal::server
