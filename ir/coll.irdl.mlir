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

  // Collective level. Every collective has the operand groups (inputs,
  // outputs, deps): inputs[i] lives on devices[i] (coll.broadcast: its one
  // input on `root`), outputs on the same devices (coll.reduce and
  // all_reduce with `to_device`: one output); it starts after the `deps`
  // tokens and returns a token. Optional `strategy` on all of them (the
  // names per op are in ir/ops.py), checked in Python with the rest.
  //
  // Tensor form (value semantics, for frontends): the inputs are ranked
  // tensors, `outputs` is empty, and the op returns its token and then one
  // tensor per output the memref form would have had, in that order.
  // coll-bufferize turns it into the memref form. One form per op (IRDL
  // cannot say so across groups: the Python verifier does). `inputs` are
  // irdl.any, checked in Python to be memrefs or ranked tensors: in LLVM
  // 22.1.8 an irdl.any_of over two irdl.base constraints aborts the loader
  // ("unknown IRDL constraint", IRDLLoading.cpp:541).
  //
  // all_reduce: every output (or the one on `to_device`) = (+)_i inputs[i].
  // Optional attributes: `to_device` (i64), `threshold` (i64, elements).
  irdl.operation @all_reduce {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
    %sum = irdl.is "sum"
    %prod = irdl.is "prod"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %and = irdl.is "and"
    %or = irdl.is "or"
    %xor = irdl.is "xor"
    %kind = irdl.any_of(%sum, %prod, %max, %min, %and, %or, %xor)
    %devices = irdl.base "#builtin.dense_array"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"kind" = %kind, "devices" = %devices}
  }

  // outputs[j] = slice j of (+)_i inputs[i] along `scatter_axis`
  // (that dimension divided by N).
  irdl.operation @reduce_scatter {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
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
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"kind" = %kind, "devices" = %devices, "scatter_axis" = %scatter_axis}
  }

  // outputs[j] = the inputs concatenated in device order along
  // `gather_axis` (that dimension multiplied by N).
  irdl.operation @all_gather {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %gather_axis = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"devices" = %devices, "gather_axis" = %gather_axis}
  }

  // one output on device `root` (which may be outside `devices`)
  // = (+)_i inputs[i].
  irdl.operation @reduce {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
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
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"kind" = %kind, "devices" = %devices, "root" = %root}
  }

  // one input on device `root` (in `devices` or not); every output
  // outputs[j], on devices[j], gets a copy.
  irdl.operation @broadcast {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %root = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"devices" = %devices, "root" = %root}
  }

  // inputs[i] is split into N blocks along `split_axis`;
  // outputs[j] = block j of every input, concatenated in device order along
  // `concat_axis`.
  irdl.operation @all_to_all {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %split_axis = irdl.base "#builtin.integer"
    %concat_axis = irdl.base "#builtin.integer"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"devices" = %devices, "split_axis" = %split_axis, "concat_axis" = %concat_axis}
  }

  // outputs[t] = inputs[s] for every (s, t) in `pairs` (flattened
  // s0, t0, s1, t1, ...: positions in `devices`; no position a source or a
  // target twice, checked in Python). An output no pair targets is not
  // written (tensor form: zeros).
  irdl.operation @permute {
    %in = irdl.any
    %out = irdl.base "!builtin.memref"
    %tok = irdl.base @coll::@token
    %value = irdl.base "!builtin.tensor"
    %devices = irdl.base "#builtin.dense_array"
    %pairs = irdl.base "#builtin.dense_array"
    irdl.operands(inputs: variadic %in, outputs: variadic %out, deps: variadic %tok)
    irdl.results(token: %tok, values: variadic %value)
    irdl.attributes {"devices" = %devices, "pairs" = %pairs}
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
