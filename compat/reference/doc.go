// Package reference runs Apache Kafka itself beside fakekafka and compares
// them: a harness that starts a real KRaft cluster from Maven Central's jars
// (Kafka), one Target interface over both clusters so that a failure scenario
// is written once, differential scenarios whose observations are tabled in
// docs/reference.md, and a corpus of raw requests compared field by field.
//
// Its tests need Java 17 and Maven and run only with FAKEKAFKA_REFERENCE=1
// (scripts/reference.sh); otherwise they skip.
package reference
