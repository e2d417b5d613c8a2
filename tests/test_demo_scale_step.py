from failcodes.demo import STEPS, DemoContext


def test_demo_scale_step_prices_modes_without_calls(tmp_path) -> None:
    ctx = DemoContext(out_dir=tmp_path)
    names = [s.name for s in STEPS]
    upto = names.index("scale")
    outputs = {step.name: step.run(ctx) for step in STEPS[: upto + 1]}
    table = outputs["scale"].tables[0][1].set_index("mode")
    units = sum(len(r[k][0]) for r in ctx.results["judge"].values() for k in r if k == "retrieval")
    assert (table["units"] == units).all()
    # batch prices are half the synchronous ones (bundled gpt-5-mini batch_discount 0.5), and
    # a batch misses the provider's prompt cache once where 8 concurrent first calls miss 8
    # times: those prefix tokens cost $0.25 instead of $0.025 per million (prices.yaml)
    sync, batch = table.loc["one call per unit", "cost_usd"], table.loc["batch", "cost_usd"]
    more_cached = (
        table.loc["batch", "cached_input_tokens"]
        - table.loc["one call per unit", "cached_input_tokens"]
    )
    # 7 more hits of the prefix (system prompt + per-dimension answer schema), cached in
    # 128-token steps: 3,328 tokens
    assert more_cached == 7 * 3328
    assert abs(batch - (sync - more_cached * (0.25 - 0.025) / 1e6) / 2) <= 0.0001
    # the cascade sends fewer units to the LLM, every mode costs less than the naive run
    assert table.loc["cascade (offline first) + batch", "to_judge"] < units
    assert (table["cost_usd"] < table["naive_cost_usd"]).all()
    assert (tmp_path / "scale" / "dry_run.csv").exists()
