"""The operators of an exported model (:mod:`morf_rs.onnx`), one stage at a time."""

from __future__ import annotations

import numpy as np


class Graph:
    """An ONNX graph being written: its nodes, constants and outputs over one
    float32 input ``X`` of ``n_features`` columns."""

    def __init__(self, onnx, opset, ml_opset, n_features):
        self._onnx = onnx
        self._helper = onnx.helper
        self._opset = opset
        self._ml_opset = ml_opset
        self._nodes = []
        self._constants = []
        self._outputs = []
        self._names = 0
        self._input = self._helper.make_tensor_value_info(
            "X", onnx.TensorProto.FLOAT, ["N", n_features]
        )

    def _name(self, stem):
        self._names += 1
        return f"{stem}_{self._names}"

    def const(self, array, stem="const"):
        """A constant holding the numpy ``array``; returns its name."""
        name = self._name(stem)
        array = np.asarray(array)
        if array.dtype.kind in "USO":
            tensor = self._helper.make_tensor(
                name,
                self._onnx.TensorProto.STRING,
                array.shape,
                [str(v).encode() for v in array.reshape(-1)],
            )
        else:
            tensor = self._onnx.numpy_helper.from_array(array, name)
        self._constants.append(tensor)
        return name

    def op(self, op_type, *inputs, domain="", **attributes):
        """Appends node ``op_type`` on ``inputs``; returns its one output's name."""
        output = self._name(op_type.lower())
        self._nodes.append(
            self._helper.make_node(
                op_type, list(inputs), [output], domain=domain, **attributes
            )
        )
        return output

    def _reduce(self, op_type, data, axis, keepdims):
        """``op_type`` (ReduceSum, ReduceMax) over ``axis``: its axes are an input
        from opset 18 on (ReduceSum from 13), an attribute before."""
        if op_type == "ReduceSum" or self._opset >= 18:
            axes = self.const(np.array([axis], dtype=np.int64), "axes")
            return self.op(op_type, data, axes, keepdims=keepdims)
        return self.op(op_type, data, axes=[axis], keepdims=keepdims)

    def project(self, plain, pooled, method):
        """The projection of X on every atom: columns of the ``plain`` atoms
        ((features, weights, rescaled) triples), then of the ``pooled`` ones
        ((sign, plain columns of the shifts, rescaled): +1 maximum, -1
        minimum); where a projection touches a missing feature, the sum over
        the present ones rescaled to the atom's whole ``|w|`` (NaN when none is
        present) for ``rescaled`` atoms, NaN for the others. ``method``:
        "matmul" or "gather"."""
        if not plain:
            return "X"  # Trees without splits read nothing.
        missing = self.op("IsNaN", "X")
        zero = self.const(np.zeros((), dtype=np.float32), "zero")
        clean = self.op("Where", missing, zero, "X")
        # ReduceMax takes no booleans: the indicator is reduced as int32.
        as_int = self.op("Cast", missing, to=self._onnx.TensorProto.INT32)
        any_missing = self.op("ReduceMax", as_int)
        any_missing = self.op("Cast", any_missing, to=self._onnx.TensorProto.BOOL)
        missing = self.op("Cast", missing, to=self._onnx.TensorProto.FLOAT)
        present = self.op("Sub", self.const(np.ones((), dtype=np.float32)), missing)
        # Each atom's whole |w|, summed in its order in float32 as the engine sums.
        whole = np.array(
            [np.cumsum(np.abs(w), dtype=np.float32)[-1] for _, w, _ in plain],
            dtype=np.float32,
        )
        rescaled = np.array([r for _, _, r in plain], dtype=bool)
        n_features = self._input.type.tensor_type.shape.dim[1].dim_value
        if method == "matmul":
            weights = np.zeros((n_features, len(plain)), dtype=np.float32)
            members = np.zeros(weights.shape, dtype=np.uint8)
            for column, (features, atom_weights, _) in enumerate(plain):
                weights[features, column] = atom_weights
                members[features, column] = 1
            weights = self.const(weights, "atom_weights")
            values = self.op("MatMul", clean, weights)
            # Stored as bytes, a fifth of the file's weights, made float on loading.
            members = self.op(
                "Cast",
                self.const(members, "atom_members"),
                to=self._onnx.TensorProto.FLOAT,
            )

            def touched_and_present():
                return (
                    self.op("MatMul", missing, members),
                    self.op("MatMul", present, self.op("Abs", weights)),
                )

        else:
            width = max(len(features) for features, _, _ in plain)
            # Padding repeats an atom's first feature with weight 0: no new member.
            indices = np.empty((len(plain), width), dtype=np.int64)
            weights = np.zeros((len(plain), width), dtype=np.float32)
            for column, (features, atom_weights, _) in enumerate(plain):
                indices[column] = features[0]
                indices[column, : len(features)] = features
                weights[column, : len(features)] = atom_weights
            indices = self.const(indices, "atom_features")
            weights = self.const(weights, "atom_weights")
            gathered = self.op("Gather", clean, indices, axis=1)
            terms = self.op("Mul", gathered, weights)
            values = self._reduce("ReduceSum", terms, 2, keepdims=0)

            def touched_and_present():
                def gathered(indicator):
                    return self.op("Gather", indicator, indices, axis=1)

                present_weight = self.op(
                    "Mul", gathered(present), self.op("Abs", weights)
                )
                return (
                    self._reduce("ReduceMax", gathered(missing), 2, keepdims=0),
                    self._reduce("ReduceSum", present_weight, 2, keepdims=0),
                )

        values = self._if_missing(
            any_missing,
            values,
            lambda: self._resolve_missing(
                values, *touched_and_present(), whole, rescaled
            ),
        )
        if pooled:
            values = self._pool(values, pooled)
        return values

    def _resolve_missing(self, values, touched, present_weight, whole, rescaled):
        """``values`` where a projection touches no missing feature (``touched``
        0); elsewhere, for ``rescaled`` columns, the value times ``whole`` over
        ``present_weight`` (NaN where that is 0), and NaN for the others."""
        zero = self.const(np.zeros((), dtype=np.float32), "zero")
        nan = self.const(np.full((), np.nan, dtype=np.float32), "nan")
        factor = self.op(
            "Div", self.const(whole[None, :], "atom_whole_weight"), present_weight
        )
        scaled = self.op(
            "Where",
            self.op("Greater", present_weight, zero),
            self.op("Mul", values, factor),
            nan,
        )
        missing_value = self.op(
            "Where", self.const(rescaled[None, :], "atom_rescaled"), scaled, nan
        )
        return self.op(
            "Where", self.op("Greater", touched, zero), missing_value, values
        )

    def _if_missing(self, any_missing, values, resolved):
        """What ``resolved()`` builds (the projections with missing features
        treated) where ``any_missing``; else ``values``: a batch without NaN
        skips the products that find them."""
        helper, tensor_proto = self._helper, self._onnx.TensorProto
        branches = []
        for build in (resolved, lambda: self.op("Identity", values)):
            outer, self._nodes = self._nodes, []
            output = build()
            nodes, self._nodes = self._nodes, outer
            branches.append(
                helper.make_graph(
                    nodes,
                    self._name("branch"),
                    [],
                    [helper.make_tensor_value_info(output, tensor_proto.FLOAT, None)],
                )
            )
        return self.op(
            "If", any_missing, then_branch=branches[0], else_branch=branches[1]
        )

    def _pool(self, values, pooled):
        """``values`` of the plain columns (NaN where missing) followed by the
        pooled columns': the maximum (minimum) of the values over the shifts,
        skipping missing ones for ``rescaled`` atoms (missing when all are),
        missing when any is for the others."""
        n_shifts = max(len(shifts) for _, shifts, _ in pooled)
        # Padding repeats a shift, which changes no maximum.
        columns = np.empty((len(pooled), n_shifts), dtype=np.int64)
        signs = np.empty((len(pooled), 1), dtype=np.float32)
        rescaled = np.empty(len(pooled), dtype=bool)
        for p, (sign, shifts, rescales) in enumerate(pooled):
            columns[p] = shifts[0]
            columns[p, : len(shifts)] = shifts
            signs[p] = sign
            rescaled[p] = rescales
        columns = self.const(columns, "shift_columns")
        signs_2d = self.const(signs, "pool_signs")
        shifted = self.op("Gather", values, columns, axis=1)
        is_missing = self.op("IsNaN", shifted)
        # A missing shift takes no part in the maximum: it counts as -infinity.
        lowest = self.const(np.full((), -np.inf, dtype=np.float32), "lowest")
        # The minimum is minus the maximum of the negated values (exact).
        signed = self.op("Mul", shifted, signs_2d)
        signed = self.op("Where", is_missing, lowest, signed)
        best = self._reduce("ReduceMax", signed, 2, keepdims=0)
        best = self.op("Mul", best, self.const(signs[:, 0], "pool_signs"))
        as_int = self.op("Cast", is_missing, to=self._onnx.TensorProto.INT32)
        any_shift = self._reduce("ReduceMax", as_int, 2, keepdims=0)
        every_shift = self._reduce("ReduceMin", as_int, 2, keepdims=0)
        one = self.const(np.ones((), dtype=np.int32), "one")
        # Where would pick between the two, but ONNX Runtime has no boolean Where.
        rescales = self.const(rescaled[None, :], "pool_rescaled")
        pooled_missing = self.op(
            "Or",
            self.op("And", rescales, self.op("Equal", every_shift, one)),
            self.op("And", self.op("Not", rescales), self.op("Equal", any_shift, one)),
        )
        nan = self.const(np.full((), np.nan, dtype=np.float32), "nan")
        best = self.op("Where", pooled_missing, nan, best)
        return self.op("Concat", values, best, axis=1)

    def tree_ensemble(self, features, nodes, targets, n_targets, base=None):
        """A TreeEnsembleRegressor over ``features`` summing its ``targets``'
        leaf values (plus ``base``) into ``n_targets`` columns."""
        attributes = {
            "n_targets": n_targets,
            "aggregate_function": "SUM",
            "post_transform": "NONE",
            "nodes_treeids": nodes["treeids"],
            "nodes_nodeids": nodes["nodeids"],
            "nodes_featureids": nodes["featureids"],
            "nodes_modes": nodes["modes"],
            "nodes_values": nodes["values"],
            "nodes_truenodeids": nodes["truenodeids"],
            "nodes_falsenodeids": nodes["falsenodeids"],
            "nodes_missing_value_tracks_true": nodes["missing"],
            "target_treeids": targets["treeids"],
            "target_nodeids": targets["nodeids"],
            "target_ids": targets["ids"],
            "target_weights": targets["weights"],
        }
        if base is not None:
            attributes["base_values"] = [float(v) for v in base]
        return self.op(
            "TreeEnsembleRegressor", features, domain="ai.onnx.ml", **attributes
        )

    def normalised(self, sums, n_classes):
        """Rows of ``sums`` divided by their total; uniform where it is 0."""
        total = self._reduce("ReduceSum", sums, 1, keepdims=1)
        voted = self.op(
            "Greater", total, self.const(np.zeros((), dtype=np.float32), "zero")
        )
        uniform = self.const(np.full((1, n_classes), 1 / n_classes, dtype=np.float32))
        return self.op("Where", voted, self.op("Div", sums, total), uniform)

    def vote_mean(self, sums, n_outputs, prior):
        """The first ``n_outputs`` columns of ``sums`` divided by the last (the
        number of votes); ``prior`` where it is 0."""

        def columns(start, end):
            bounds = [np.array([b], dtype=np.int64) for b in (start, end, 1)]
            return self.op(
                "Slice",
                sums,
                *(self.const(b) for b in bounds[:2]),
                self.const(bounds[2]),
            )

        values, votes = columns(0, n_outputs), columns(n_outputs, n_outputs + 1)
        voted = self.op(
            "Greater", votes, self.const(np.zeros((), dtype=np.float32), "zero")
        )
        prior = self.const(np.asarray(prior, dtype=np.float32).reshape(1, -1))
        return self.op("Where", voted, self.op("Div", values, votes), prior)

    def link(self, raw, n_classes):
        """Class probabilities from a boosted model's raw scores: the sigmoid of
        one score for two classes, else the softmax of one score per class (1 for
        a single class)."""
        if n_classes != 2:
            return self.op("Softmax", raw, axis=1)
        positive = self.op("Sigmoid", raw)
        one = self.const(np.ones((), dtype=np.float32), "one")
        return self.op("Concat", self.op("Sub", one, positive), positive, axis=1)

    def output(self, name, tensor, width, element_type=None):
        """Names ``tensor`` (N, width) (or (N,) when width is None) an output."""
        self._nodes.append(self._helper.make_node("Identity", [tensor], [name]))
        shape = ["N"] if width is None else ["N", width]
        element_type = element_type or self._onnx.TensorProto.FLOAT
        self._outputs.append(
            self._helper.make_tensor_value_info(name, element_type, shape)
        )

    def classifier_outputs(self, probabilities, classes):
        """``label``, the first most probable class of ``classes``, and
        ``probabilities``."""
        classes = np.asarray(classes)
        tensor_proto = self._onnx.TensorProto
        if classes.dtype.kind in "biu":
            classes, element_type = classes.astype(np.int64), tensor_proto.INT64
        elif classes.dtype.kind == "f":
            classes, element_type = classes.astype(np.float64), tensor_proto.DOUBLE
        elif classes.dtype.kind in "USO" and all(isinstance(c, str) for c in classes):
            element_type = tensor_proto.STRING
        else:
            raise TypeError(
                "to_onnx exports classes that are integers, floats or strings; "
                f"these are {classes.dtype} ({classes[:3].tolist()!r}...)."
            )
        best = self.op("ArgMax", probabilities, axis=1, keepdims=0)
        label = self.op("Gather", self.const(classes, "classes"), best, axis=0)
        self.output("label", label, None, element_type)
        self.output("probabilities", probabilities, len(classes))

    def model(self, doc):
        """The finished ``onnx.ModelProto``."""
        helper = self._helper
        graph = helper.make_graph(
            self._nodes, "morf_rs", [self._input], self._outputs, self._constants
        )
        opsets = [
            helper.make_opsetid("", self._opset),
            helper.make_opsetid("ai.onnx.ml", self._ml_opset),
        ]
        model = helper.make_model(
            graph,
            opset_imports=opsets,
            producer_name="morf_rs",
            doc_string=doc,
            ir_version=helper.find_min_ir_version_for(opsets),
        )
        return model
