// The coll dialect: its op set, generated from the registry
// (coll/collectives/irdl.py: python -m coll.collectives.irdl > ir/coll.irdl.mlir);
// do not edit by hand. Load it from Python with coll.ir.load_dialect(ctx), or
// into upstream tools with `mlir-opt --irdl-file=ir/coll.irdl.mlir`. IRDL ops
// print in generic form.
//
// IRDL binds one type per constraint variable, across a whole variadic group,
// so every variadic group below holds values of one type. That is why
// placement is an attribute at the collective level (the inputs live on
// different devices) and a memref memory space (#coll.device<i>) at the
// explicit level, where `coll.combine` splits its inputs into `lhs` and a
// homogeneous variadic `rhs`. What IRDL cannot say is checked by the Python
// verifier in ir/verifier.py.
//
// Collective level: every collective has the operand groups (inputs,
// outputs, deps) and returns a token; its optional attributes (strategy,
// threshold, to_device, groups, order) are checked in Python. In the tensor form
// (value semantics, for frontends) `outputs` is empty and the op returns its
// token and one tensor per output. `inputs` are irdl.any, checked in Python to
// be memrefs or ranked tensors: in LLVM 22.1.8 an irdl.any_of over two
// irdl.base constraints aborts the loader ("unknown IRDL constraint",
// IRDLLoading.cpp:541).
irdl.dialect @coll {
  // Ordering token returned by every asynchronous op.
  irdl.type @token {
  }

  // Placement of a buffer: used as a memref memory space.
  irdl.attribute @device {
    %id = irdl.base "#builtin.integer"
    irdl.parameters(id: %id)
  }

  // Every output (or the one on `to_device`) = (+)_i inputs[i].
  irdl.operation @all_reduce {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    %devices = irdl.base "#builtin.dense_array"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"kind" = %kind, "devices" = %devices}
  }

  // outputs[j] = slice j of (+)_i inputs[i] along `scatter_axis`.
  irdl.operation @reduce_scatter {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    %devices = irdl.base "#builtin.dense_array"
    %scatter_axis = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"kind" = %kind, "devices" = %devices, "scatter_axis" = %scatter_axis}
  }

  // outputs[j] = the inputs concatenated along `gather_axis`.
  irdl.operation @all_gather {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %gather_axis = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"devices" = %devices, "gather_axis" = %gather_axis}
  }

  // The one output, on `root` (in the group or not), = (+)_i inputs[i].
  irdl.operation @reduce {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    %devices = irdl.base "#builtin.dense_array"
    %root = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"kind" = %kind, "devices" = %devices, "root" = %root}
  }

  // The one input is on `root`; outputs[j] (on devices[j]) get a copy.
  irdl.operation @broadcast {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %root = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"devices" = %devices, "root" = %root}
  }

  // outputs[j] = block j (along `split_axis`) of every input, concatenated in
  // device order along `concat_axis`.
  irdl.operation @all_to_all {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %split_axis = irdl.base "#builtin.integer"
    %concat_axis = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"devices" = %devices, "split_axis" = %split_axis, "concat_axis" = %concat_axis}
  }

  // outputs[t] = inputs[s] for every (source, target) pair; an output no pair
  // targets is not written (tensor form: zeros).
  irdl.operation @permute {
    %inputs = irdl.any
    %outputs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %values = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %pairs = irdl.base "#builtin.dense_array"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, deps: variadic %deps)
    irdl.results(token: %token, values: variadic %values)
    irdl.attributes {"devices" = %devices, "pairs" = %pairs}
  }

  // Explicit level: a scratch buffer on the device its memory space names.
  irdl.operation @alloc {
    %buffer = irdl.base "!builtin.memref"
    irdl.results(buffer: %buffer)
  }

  // Explicit level: %t = coll.copy(source, target, deps...) copies source into
  // target (either may be a subview, on any devices) after `deps`.
  irdl.operation @copy {
    %sources = irdl.base "!builtin.memref"
    %targets = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    irdl.operands(sources: %sources, targets: %targets, deps: variadic %deps)
    irdl.results(token: %token)
  }

  // Explicit level: %t = coll.combine(lhs, rhs..., output, deps...): output =
  // lhs (+) rhs[0] (+) ... elementwise, one kernel on one device, after `deps`.
  // The output may alias an input. The lhs and the output may hold the
  // accumulator type of the rhs's element type (f32 for f16, bf16 and fp8): a
  // partial result carried between devices, rounded once.
  irdl.operation @combine {
    %lhs = irdl.base "!builtin.memref"
    %rhs = irdl.base "!builtin.memref"
    %outs = irdl.base "!builtin.memref"
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    irdl.operands(lhs: %lhs, rhs: variadic %rhs, outs: %outs, deps: variadic %deps)
    irdl.results(token: %token)
    irdl.attributes {"kind" = %kind}
  }

  // Explicit level: a token that completes when all `deps` have.
  irdl.operation @join {
    %deps = irdl.base @coll::@token
    %token = irdl.base @coll::@token
    irdl.operands(deps: variadic %deps)
    irdl.results(token: %token)
  }

  // Blocks the host until all `deps` have completed.
  irdl.operation @wait {
    %deps = irdl.base @coll::@token
    irdl.operands(deps: variadic %deps)
  }

  // Explicit level: coll.implements(inputs..., outputs..., token), the claim
  // that the program ending in `token` computes the collective named by `op`
  // ("all_reduce", ...) from inputs into outputs, with the collective's other
  // attributes (kind, devices, to_device, root, axes). `order = "canonical"`
  // claims the association too: every element of a sum or prod on floats is
  // ((x_0 (+) x_1) (+) x_2) ... in device order, its f16/bf16 partials held in
  // f32 and rounded once, at the end (the lowering of a float sum or prod under
  // the default order sets it; absent or "any": only which inputs each element
  // combines is claimed). Its buffers carry no placement (a program on placed
  // buffers names them through memref.memory_space_cast). coll-check-semantics
  // proves it; the back ends erase it.
  irdl.operation @implements {
    %inputs = irdl.base "!builtin.memref"
    %outputs = irdl.base "!builtin.memref"
    %tokens = irdl.base @coll::@token
    %op = irdl.base "#builtin.string"
    irdl.operands(inputs: variadic %inputs, outputs: variadic %outputs, tokens: %tokens)
    irdl.attributes {"op" = %op}
  }
}
