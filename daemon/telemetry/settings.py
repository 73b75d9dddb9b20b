"""The `telemetry:` section of the config: how often to read, and where the caps sit."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CAP_PROFILES = ("training", "field")


class TelemetrySettings(BaseModel):
    """Defaults follow the design documents: <= 20% or >= 85 C caps at training, <= 40% or >= 75 C at field."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="read sensors and cap the profile by them")
    backend: Literal["auto", "sysfs", "jtop"] = Field("auto", description="auto: jtop when its service runs")
    interval_s: float = Field(1.0, gt=0, le=2.0, description="a cap must apply within 2 s of the reading")
    profile_order: list[str] = Field(["training", "field", "emergency"], min_length=2,
                                     description="most economical first, fastest last")
    battery_training_percent: float = Field(20.0, ge=0, le=100)
    battery_field_percent: float = Field(40.0, ge=0, le=100)
    thermal_training_c: float = Field(85.0, gt=0, lt=150)
    thermal_field_c: float = Field(75.0, gt=0, lt=150)
    battery_margin_percent: float = Field(5.0, ge=0, description="a battery cap lifts this far above its threshold")
    thermal_margin_c: float = Field(5.0, ge=0, description="a thermal cap lifts this far below its threshold")
    dwell_s: float = Field(60.0, ge=0, description="how long a reading stays on the good side before a cap lifts")
    nvpmodel_socket: str = Field("/run/tcccd-nvpmodel/nvpmodel.sock",
                                 description="the root helper that switches power modes (tcccd-nvpmodel.socket)")

    @model_validator(mode="after")
    def _ordered(self) -> TelemetrySettings:
        if self.battery_training_percent > self.battery_field_percent:
            raise ValueError("battery_training_percent must not be above battery_field_percent")
        if self.thermal_training_c < self.thermal_field_c:
            raise ValueError("thermal_training_c must not be below thermal_field_c")
        if len(set(self.profile_order)) != len(self.profile_order):
            raise ValueError("profile_order names a profile twice")
        missing = [name for name in CAP_PROFILES if name not in self.profile_order]
        if missing:
            raise ValueError(f"profile_order must include the cap profiles {', '.join(CAP_PROFILES)}; "
                             f"missing: {', '.join(missing)}")
        return self
