// Package bench measures fakekafka side by side with franz-go's kfake,
// librdkafka's mock cluster and a null broker, through the same franz-go
// client and the same workloads, in one process. The command
// github.com/fakekafka/fakekafka/compat/cmd/bench runs it and prints the
// table; see docs/performance.md.
package bench
