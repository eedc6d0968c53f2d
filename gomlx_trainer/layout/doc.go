// Package layout is how the trainer's work lies on its devices: the device
// mesh, the shard modes and the rule that places each variable under fsdp,
// the padding of a batch's rows to split over the devices, and every check
// of a device count against a recipe, a backend or a model.
//
// The learner (grpo), the sampler, the backend and the memory planner
// (memplan) all read their layout here, so that each rule has one
// definition.
//
// A mesh has a 2-D shape, [replicas, devices]: replicas are the groups
// (hosts, or the replicas of hybrid sharding) over which the state would be
// replicated, devices those within a group over which it is split. Only
// one replica runs today; the mesh then is GoMLX's 1-D mesh along
// DeviceAxis, and XLA's SPMD partitioner inserts every collective.
//
// Under the data mode every variable is whole on every device and each
// batch is split on its first axis; under fsdp each variable is split too,
// along FSDPAxis, its largest axis (the first of equals), XLA gathering a
// weight where a layer needs it. A batch whose rows do not divide by the
// devices is padded (PadRows) with rows that weigh nothing.
//
// The checks' errors name the knobs as their caller does (Names): the
// config's keys, or a recipe's keys with their flags.
package layout
