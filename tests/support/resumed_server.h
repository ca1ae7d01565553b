// "A resumed server serves nothing": the fencing suites' check of a canal-server frozen
// (SIGSTOP) past its ZooKeeper session, then resumed (SIGCONT), while another server runs its
// destination (tests/integration/ha_server_failover_test.cc, fleet_fencing_test.cc).
// Header-only: for test targets that link canal_client.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/common/status.h"

namespace canal::testing {

// What the resumed server answered.
struct ResumedServerAnswers {
  int refusals = 0;                  // answers that were an error (or a closed connection)
  int data = 0;                      // batches it delivered (each a test failure)
  std::vector<std::string> answers;  // "<request>: OK" or ": <error>", in order
};

// Asks the resumed server for data four ways: subscribe, then get, on `before` (a connection
// made before the freeze), then connect and subscribe, then get, on `after` (not connected
// yet). Every batch it delivers is a test failure; the caller checks the refusals.
inline ResumedServerAnswers ExpectResumedServerServesNothing(client::Connector& before, client::Connector& after) {
  ResumedServerAnswers r;
  auto expect_no_data = [&](const char* what, const Status& st, const client::Message* m) {
    if (m != nullptr && st.ok() && m->batch_id() != -1) {
      ++r.data;
      ADD_FAILURE() << what << ": the resumed server delivered batch " << m->batch_id();
    }
    if (!st.ok()) ++r.refusals;
    r.answers.push_back(std::string(what) + ": " + (st.ok() ? "OK" : st.ToString()));
  };
  Status s = before.Subscribe();
  expect_no_data("subscribe on the connection from before the freeze", s, nullptr);
  client::Message m1;
  s = before.GetWithoutAck(64, 500, client::TimeUnit::kMilliseconds, &m1);
  expect_no_data("get on it", s, &m1);
  s = after.Connect();
  if (s.ok()) s = after.Subscribe();
  expect_no_data("connect and subscribe after resuming", s, nullptr);
  client::Message m2;
  s = after.GetWithoutAck(64, 500, client::TimeUnit::kMilliseconds, &m2);
  expect_no_data("get on it", s, &m2);
  return r;
}

}  // namespace canal::testing
