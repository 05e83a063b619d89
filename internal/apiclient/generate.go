package apiclient

// client.gen.go is what oapi-codegen generates from credo's OpenAPI document; a test in
// cmd/credo fails when it is not current. The package is used only by tests.
//go:generate go test ../../cmd/credo -run TestGeneratedClientIsCurrent -update-client
