module github.com/fakekafka/fakekafka/api

go 1.26.8
