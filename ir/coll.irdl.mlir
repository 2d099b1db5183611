// The coll dialect: the single source of truth for its op set.
// Load it from Python with coll.ir.load_dialect(ctx), or into upstream tools
// with `mlir-opt --irdl-file=ir/coll.irdl.mlir`. IRDL ops print in generic form.
//
// IRDL binds one type per constraint variable, across a whole variadic group,
// so every variadic group below holds values of one type. That is why
// placement is an attribute at the collective level (the inputs live on
// different devices) and a memref memory space (#coll.device<i>) at the
// explicit level, where `coll.combine` splits its inputs into `lhs` and a
// homogeneous variadic `rhs`. What IRDL cannot say is checked by the Python
// verifier in ir/verifier.py.
irdl.dialect @coll {
  // Ordering token returned by every asynchronous op.
  irdl.type @token {
  }

  // Placement of a buffer: used as a memref memory space.
  irdl.attribute @device {
    %id = irdl.base "#builtin.integer"
    irdl.parameters(id: %id)
  }

  // Collective level. inputs[i] lives on devices[i]. Multi-device output:
  // one output per input, on the same device. Single-device output: one
  // output on device `to_device`. Optional attributes, checked in Python:
  // `strategy` (auto|naive|ring|all2all), `to_device` (i64),
  // `threshold` (i64, elements).
  irdl.operation @all_reduce {
    %in = irdl.base "!builtin.memref"
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    %devices = irdl.base "#builtin.dense_array"
    irdl.operands(inputs: variadic %in, outputs: variadic %out)
    irdl.results(token: %tok)
    irdl.attributes {"kind" = %kind, "devices" = %devices}
  }

  // Explicit level: scratch buffer on the device named by its memory space.
  irdl.operation @alloc {
    %buf = irdl.base "!builtin.memref"
    irdl.results(buffer: %buf)
  }

  // Explicit level: copy source into target (either may be a subview, on
  // any devices), after `deps`.
  irdl.operation @copy {
    %src = irdl.base "!builtin.memref"
    %dst = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    irdl.operands(source: %src, target: %dst, deps: variadic %tok)
    irdl.results(token: %tok)
  }

  // Explicit level: output = lhs (+) rhs[0] (+) ... elementwise, one kernel
  // on one device, after `deps`. The output may alias an input.
  irdl.operation @combine {
    %lhs = irdl.base "!builtin.memref"
    %rhs = irdl.base "!builtin.memref"
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    irdl.operands(lhs: %lhs, rhs: variadic %rhs, output: %out, deps: variadic %tok)
    irdl.results(token: %tok)
    irdl.attributes {"kind" = %kind}
  }

  // Explicit level: the claim that the program ending in `token` computes
  // the collective named by `op` ("all_reduce", ...) from `inputs` into
  // `outputs`. Its other attributes are the collective's (kind, devices,
  // to_device, root, axes), checked in Python. Like the collective's, its
  // buffers carry no placement (one type per variadic group): a program on
  // placed buffers names them through memref.memory_space_cast. The
  // lowering emits it next to
  // its final join, users write it under their own algorithms;
  // coll-check-semantics proves it, and the back ends erase it.
  irdl.operation @implements {
    %in = irdl.base "!builtin.memref"
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %name = irdl.base "#builtin.string"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, token: %tok)
    irdl.attributes {"op" = %name}
  }

  // Explicit level: a token that completes when all `deps` have.
  irdl.operation @join {
    %tok = irdl.base @coll::@token
    irdl.operands(deps: variadic %tok)
    irdl.results(token: %tok)
  }

  // Blocks the host until all `deps` have completed.
  irdl.operation @wait {
    %tok = irdl.base @coll::@token
    irdl.operands(deps: variadic %tok)
  }
}
