// Command mathrl trains and evaluates LLMs with reinforcement learning on verifiable math.
//
// Every subcommand lives in its own file, which parses flags into an options
// struct and calls one package function; main.go only wires cancellation and exits.
package main
