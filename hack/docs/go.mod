module github.com/tenon-dev/tenon/hack/docs

go 1.26.0
