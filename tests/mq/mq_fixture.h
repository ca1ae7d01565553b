// What the Kafka and RabbitMQ suites share: starting the daemon, its logs,
// and the judgement of the workload (mq_workload.h).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "mq/mq_workload.h"
#include "support/canal_install.h"

namespace canal::mq::testing {

// bin/startup.sh, with its output and the server log on failure.
::testing::AssertionResult StartServer(const canal::testing::CanalInstall& install);
// The server log and destination "example"'s log.
std::string ServerLogs(const canal::testing::CanalInstall& install);

// The workload's checks: every key's changes once and in order, all in the
// partition `partition_of` names (the same partition for every change of a
// key); one DDL (ALTER), in partition 0; in flat form, the values and old
// images Canal's FlatMessage carries.
void CheckWorkload(const std::vector<Change>& changes, bool flat,
                   const std::function<int32_t(const Change&)>& partition_of);

// The changes the workload makes, the DDL included.
size_t ExpectedRowChanges();

}  // namespace canal::mq::testing
