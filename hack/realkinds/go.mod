module github.com/tenon-dev/tenon/hack/realkinds

go 1.26.0
