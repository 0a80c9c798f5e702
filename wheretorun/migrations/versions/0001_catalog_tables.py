"""catalog tables

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from alembic import op


revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def money(precision: int, scale: int) -> sa.types.TypeEngine[Decimal]:
    """Exact amounts: NUMERIC on PostgreSQL, a scaled integer on SQLite (see pricing/types.py)."""
    return sa.Numeric(precision, scale).with_variant(sa.BigInteger(), "sqlite")


TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accelerators",
        sa.Column("id", sa.String(length=80), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("vendor", sa.String(length=80), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("form_factor", sa.String(length=80), nullable=True),
        sa.Column("memory_gb", sa.Float(), nullable=True),
        sa.Column("memory_bandwidth_gb_s", sa.Float(), nullable=True),
        sa.Column("fp32_tflops", sa.Float(), nullable=True),
        sa.Column("tf32_tflops", sa.Float(), nullable=True),
        sa.Column("bf16_tflops", sa.Float(), nullable=True),
        sa.Column("fp8_tflops", sa.Float(), nullable=True),
        sa.Column("int8_tops", sa.Float(), nullable=True),
        sa.Column("int4_tops", sa.Float(), nullable=True),
        sa.Column("tdp_w", sa.Float(), nullable=True),
        sa.Column("interconnect", sa.String(length=80), nullable=True),
        sa.Column("interconnect_gb_s", sa.Float(), nullable=True),
        sa.Column("internode_gb_s", sa.Float(), nullable=True),
        sa.Column("family", sa.String(length=40), nullable=True),
        sa.Column("memory_kind", sa.String(length=20), nullable=True),
        sa.Column("spec_source", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accelerators")),
    )
    with op.batch_alter_table("accelerators", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_accelerators_kind"), ["kind"], unique=False)
        batch_op.create_index(batch_op.f("ix_accelerators_vendor"), ["vendor"], unique=False)

    op.create_table(
        "catalog_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_versions")),
    )
    op.create_table(
        "models",
        sa.Column("id", sa.String(length=120), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("family", sa.String(length=80), nullable=False),
        sa.Column("open_weights", sa.Boolean(), nullable=False),
        sa.Column("hf_id", sa.String(length=200), nullable=True),
        sa.Column("total_params_b", sa.Float(), nullable=True),
        sa.Column("active_params_b", sa.Float(), nullable=True),
        sa.Column("layers", sa.Integer(), nullable=True),
        sa.Column("hidden_size", sa.Integer(), nullable=True),
        sa.Column("intermediate_size", sa.Integer(), nullable=True),
        sa.Column("attention_heads", sa.Integer(), nullable=True),
        sa.Column("kv_heads", sa.Integer(), nullable=True),
        sa.Column("head_dim", sa.Integer(), nullable=True),
        sa.Column("vocab_size", sa.Integer(), nullable=True),
        sa.Column("max_context", sa.Integer(), nullable=True),
        sa.Column("attention", sa.String(length=20), nullable=True),
        sa.Column("sliding_window", sa.Integer(), nullable=True),
        sa.Column("sliding_window_layers", sa.Integer(), nullable=True),
        sa.Column("experts", sa.Integer(), nullable=True),
        sa.Column("experts_per_token", sa.Integer(), nullable=True),
        sa.Column("kv_cache_bytes_per_token_16bit", sa.Integer(), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
    )
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_models_family"), ["family"], unique=False)

    op.create_table(
        "accelerator_aliases",
        sa.Column("alias", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("accelerator_id", sa.String(length=80), nullable=False),
        sa.ForeignKeyConstraint(
            ["accelerator_id"],
            ["accelerators.id"],
            name=op.f("fk_accelerator_aliases_accelerator_id_accelerators"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("alias", name=op.f("pk_accelerator_aliases")),
    )
    with op.batch_alter_table("accelerator_aliases", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_accelerator_aliases_accelerator_id"), ["accelerator_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_accelerator_aliases_key"), ["key"], unique=False)

    op.create_table(
        "api_prices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=80), nullable=False),
        sa.Column("model_id", sa.String(length=300), nullable=False),
        sa.Column("mode", sa.String(length=40), nullable=True),
        sa.Column("catalog_model_id", sa.String(length=120), nullable=True),
        sa.Column("input_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("cached_input_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("cache_write_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("output_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("batch_input_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("batch_output_usd_per_million_tokens", money(20, 8), nullable=True),
        sa.Column("context_window_tokens", sa.Integer(), nullable=True),
        sa.Column("max_output_tokens", sa.Integer(), nullable=True),
        sa.Column("deprecation_date", sa.Date(), nullable=True),
        sa.Column("suspect_reason", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["catalog_model_id"], ["models.id"], name=op.f("fk_api_prices_catalog_model_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_api_prices_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_prices")),
    )
    with op.batch_alter_table("api_prices", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_api_prices_catalog_model_id"), ["catalog_model_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_api_prices_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_api_prices_effective_from"), ["effective_from"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_prices_mode"), ["mode"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_prices_model_id"), ["model_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_prices_provider"), ["provider"], unique=False)
        batch_op.create_index(
            "uq_api_prices_current",
            ["model_id"],
            unique=True,
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )

    op.create_table(
        "cloud_offers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=40), nullable=False),
        sa.Column("instance_type", sa.String(length=120), nullable=False),
        sa.Column("region", sa.String(length=120), nullable=False),
        sa.Column("accelerator_name", sa.String(length=120), nullable=False),
        sa.Column("accelerator_id", sa.String(length=80), nullable=True),
        sa.Column("accelerator_count", money(10, 3), nullable=False),
        sa.Column("vcpus", money(10, 3), nullable=True),
        sa.Column("memory_gib", money(12, 3), nullable=True),
        sa.Column("on_demand_usd_per_hour", money(14, 6), nullable=True),
        sa.Column("spot_usd_per_hour", money(14, 6), nullable=True),
        sa.Column("zone_count", sa.Integer(), nullable=False),
        sa.Column("accelerator_only", sa.Boolean(), nullable=False),
        sa.Column("suspect_reason", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["accelerator_id"], ["accelerators.id"], name=op.f("fk_cloud_offers_accelerator_id_accelerators")
        ),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_cloud_offers_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cloud_offers")),
    )
    with op.batch_alter_table("cloud_offers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_cloud_offers_accelerator_id"), ["accelerator_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_cloud_offers_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_cloud_offers_effective_from"), ["effective_from"], unique=False)
        batch_op.create_index(batch_op.f("ix_cloud_offers_provider"), ["provider"], unique=False)
        batch_op.create_index(batch_op.f("ix_cloud_offers_region"), ["region"], unique=False)
        batch_op.create_index(
            "uq_cloud_offers_current",
            ["provider", "instance_type", "region", "accelerator_name", "accelerator_count"],
            unique=True,
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )

    op.create_table(
        "hardware_prices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("accelerator_id", sa.String(length=80), nullable=False),
        sa.Column("usd_per_unit", money(14, 2), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["accelerator_id"],
            ["accelerators.id"],
            name=op.f("fk_hardware_prices_accelerator_id_accelerators"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_hardware_prices_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hardware_prices")),
    )
    with op.batch_alter_table("hardware_prices", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_hardware_prices_accelerator_id"), ["accelerator_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_hardware_prices_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_hardware_prices_effective_from"), ["effective_from"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("hardware_prices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hardware_prices_effective_from"))
        batch_op.drop_index(batch_op.f("ix_hardware_prices_catalog_version_id"))
        batch_op.drop_index(batch_op.f("ix_hardware_prices_accelerator_id"))

    op.drop_table("hardware_prices")
    with op.batch_alter_table("cloud_offers", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_cloud_offers_current",
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_cloud_offers_region"))
        batch_op.drop_index(batch_op.f("ix_cloud_offers_provider"))
        batch_op.drop_index(batch_op.f("ix_cloud_offers_effective_from"))
        batch_op.drop_index(batch_op.f("ix_cloud_offers_catalog_version_id"))
        batch_op.drop_index(batch_op.f("ix_cloud_offers_accelerator_id"))

    op.drop_table("cloud_offers")
    with op.batch_alter_table("api_prices", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_api_prices_current",
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_api_prices_provider"))
        batch_op.drop_index(batch_op.f("ix_api_prices_model_id"))
        batch_op.drop_index(batch_op.f("ix_api_prices_mode"))
        batch_op.drop_index(batch_op.f("ix_api_prices_effective_from"))
        batch_op.drop_index(batch_op.f("ix_api_prices_catalog_version_id"))
        batch_op.drop_index(batch_op.f("ix_api_prices_catalog_model_id"))

    op.drop_table("api_prices")
    with op.batch_alter_table("accelerator_aliases", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_accelerator_aliases_key"))
        batch_op.drop_index(batch_op.f("ix_accelerator_aliases_accelerator_id"))

    op.drop_table("accelerator_aliases")
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_models_family"))

    op.drop_table("models")
    op.drop_table("catalog_versions")
    with op.batch_alter_table("accelerators", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_accelerators_vendor"))
        batch_op.drop_index(batch_op.f("ix_accelerators_kind"))

    op.drop_table("accelerators")
